import { create, fromBinary, fromJsonString, toBinary, toJsonString } from "@bufbuild/protobuf";
import { readFile, writeFile } from "node:fs/promises";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { episodeDifference } from "../engine/episode-difference.js";
import { Code, codeName } from "../shared/status-code.js";
import { createControlClient } from "../port/control-client.js";
import { ModelCallError } from "../port/model-port.js";
import { clientOptions, clientTarget, controlTokenOption, type ClientTarget } from "./client-target.js";
import { formatOptionsHelp, resolveOptions, UsageError, type OptionSpec } from "./options.js";

const [addrOption, ...tlsOptions] = clientOptions("Server to fetch from (when no FILE is given).");
const specs = [
  addrOption!,
  { name: "session", type: "string", arg: "NAME", default: "default", description: "Session to fetch." },
  { name: "out", type: "string", arg: "FILE", description: "Also write the episode's deterministic bytes to FILE." },
  {
    name: "allow-missing",
    type: "boolean",
    description: "Print the empty episode of a session the server does not keep, for a check that no calls were made (without it: NOT_FOUND, exit 3).",
  },
  controlTokenOption,
  ...tlsOptions,
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];

const usage = `usage: modelstub episode [FILE] [options]
       modelstub episode compare A B

Prints an episode as JSON: read from FILE (.binpb bytes or .json), or fetched from a running
server's ControlService (streamed by ExportEpisode in chunks of at most 1 MiB, so an episode of
any size arrives within gRPC's default 4 MiB message limit). \`compare\` compares two episode
files byte for byte; when they differ it prints the first differing field path with both
values, and exits 1.

${formatOptionsHelp(specs)}
`;

/** Why a file could not be read, in words (not `ENOENT: no such file or directory, open '...'`). */
function unreadable(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return "there is no such file";
    case "EISDIR":
      return "it is a folder, not a file";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    default:
      return (err as Error).message;
  }
}

/**
 * Reads an episode file: deterministic bytes (.binpb), or the JSON written beside them. Rejects
 * with an Error whose message says why in words (the file is missing, or is no episode); the
 * commands put the path before it.
 */
export async function readEpisodeFile(path: string): Promise<{ episode: Episode; bytes: Uint8Array }> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (err) {
    throw new Error(unreadable(err));
  }
  try {
    if (path.endsWith(".json")) {
      const episode = fromJsonString(EpisodeSchema, data.toString("utf8"));
      return { episode, bytes: toBinary(EpisodeSchema, episode) };
    }
    return { episode: fromBinary(EpisodeSchema, data), bytes: new Uint8Array(data) };
  } catch (err) {
    throw new Error(`it is not an episode (${(err as Error).message}): expected the .binpb bytes a server writes, or the .json beside them`);
  }
}

/** readEpisodeFile, its failure naming the file. */
async function readNamedEpisode(path: string): Promise<{ episode: Episode; bytes: Uint8Array }> {
  return readEpisodeFile(path).catch((err: unknown) => Promise.reject(new Error(`cannot read the episode ${path}: ${(err as Error).message}`)));
}

function firstByteDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

async function compare(a: string, b: string): Promise<number> {
  const [x, y] = await Promise.all([readNamedEpisode(a), readNamedEpisode(b)]);
  if (Buffer.compare(x.bytes, y.bytes) === 0) {
    process.stdout.write(`identical: ${x.bytes.length} bytes, ${x.episode.calls.length} calls\n`);
    return 0;
  }
  const field = episodeDifference(x.episode, y.episode);
  const offset = firstByteDifference(x.bytes, y.bytes);
  process.stdout.write(
    field
      ? `differ: ${field}\n(first differing byte at offset ${offset}; sizes ${x.bytes.length} and ${y.bytes.length})\n`
      : `differ in bytes only, at offset ${offset}: the fields are equal, so one encoding carries unknown fields or is not deterministic\n`,
  );
  return 1;
}

/**
 * A running server's episode bytes, streamed through ExportEpisode in chunks of at most 1 MiB:
 * any episode fits the default 4 MiB receive limit, where GetEpisode's answer (the episode
 * twice) does not past 2 MiB. A server older than ExportEpisode answers UNIMPLEMENTED; then
 * GetEpisode, asking for the bytes only.
 */
async function fetchEpisodeBytes(target: ClientTarget, session: string, token: string | undefined, allowMissing: boolean): Promise<Uint8Array> {
  const client = createControlClient(target.addr, { token, credentials: target.creds, channelOptions: target.channelOptions });
  try {
    return (await client.exportEpisode(session, { allowMissing })).bytes;
  } catch (err) {
    if (!(err instanceof ModelCallError && err.code === Code.UNIMPLEMENTED)) throw err;
    return (await client.call("GetEpisode", { session, bytesOnly: true, allowMissing })).episodeBinpb;
  } finally {
    client.close();
  }
}

/** `modelstub episode`. */
export async function episode(argv: string[]): Promise<number> {
  try {
    if (argv[0] === "compare") {
      if (argv.length !== 3) throw new UsageError("compare takes two episode files");
      return await compare(argv[1]!, argv[2]!);
    }
    const { options, positionals, sources } = resolveOptions(specs, argv);
    if (options["help"]) {
      process.stdout.write(usage);
      return 0;
    }
    if (positionals.length > 1) throw new UsageError("give at most one episode file");
    let ep: Episode;
    let bytes: Uint8Array;
    if (positionals[0]) {
      ({ episode: ep, bytes } = await readNamedEpisode(positionals[0]));
    } else {
      const target = await clientTarget(options, sources["addr"] === "default");
      bytes = await fetchEpisodeBytes(target, options["session"], options["control-token"], options["allow-missing"]);
      ep = fromBinary(EpisodeSchema, bytes);
    }
    if (options["out"]) await writeFile(options["out"], bytes);
    process.stdout.write(`${toJsonString(EpisodeSchema, ep ?? create(EpisodeSchema), { prettySpaces: 2, useProtoFieldName: true })}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub episode: ${err.message}\n\n${usage}`);
      return 2;
    }
    if (err instanceof ModelCallError && err.code !== Code.UNAVAILABLE && err.code !== Code.DEADLINE_EXCEEDED) {
      // The server answered (an unknown session, a wrong token): its message, and exit 3 as `session` does.
      process.stderr.write(`modelstub episode: the server answered ${codeName(err.code)}: ${err.details}\n`);
      return 3;
    }
    process.stderr.write(`modelstub episode: ${(err as Error).message}\n`);
    return 2;
  }
}
