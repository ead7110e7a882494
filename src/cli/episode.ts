import { create, fromBinary, fromJsonString, toBinary, toJsonString } from "@bufbuild/protobuf";
import { readFile, writeFile } from "node:fs/promises";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import type { GetEpisodeResponse } from "../../gen/modelstub/v1/control_pb.js";
import { episodeDifference } from "../engine/episode-difference.js";
import { Code } from "../shared/status-code.js";
import { createControlClient } from "../port/control-client.js";
import { ModelCallError } from "../port/model-port.js";
import { clientOptions, clientTarget, controlTokenOption, type ClientTarget } from "./client-target.js";
import { formatOptionsHelp, resolveOptions, UsageError, type OptionSpec } from "./options.js";

const [addrOption, ...tlsOptions] = clientOptions("Server to fetch from (when no FILE is given).");
const specs: OptionSpec[] = [
  addrOption!,
  { name: "session", type: "string", arg: "NAME", default: "default", description: "Session to fetch." },
  { name: "out", type: "string", arg: "FILE", description: "Also write the episode's deterministic bytes to FILE." },
  controlTokenOption,
  ...tlsOptions,
  { name: "help", type: "boolean", description: "Print this help." },
];

const usage = `usage: modelstub episode [FILE] [options]
       modelstub episode compare A B

Prints an episode as JSON: read from FILE (.binpb bytes or .json), or fetched from a running
server's ControlService (streamed by ExportEpisode in chunks of at most 1 MiB, so an episode of
any size arrives within gRPC's default 4 MiB message limit). \`compare\` compares two episode
files byte for byte; when they differ it prints the first differing field path with both
values, and exits 1.

${formatOptionsHelp(specs)}
`;

/** Reads an episode file: deterministic bytes (.binpb), or the JSON written beside them. */
export async function readEpisodeFile(path: string): Promise<{ episode: Episode; bytes: Uint8Array }> {
  const data = await readFile(path);
  if (path.endsWith(".json")) {
    const episode = fromJsonString(EpisodeSchema, data.toString("utf8"));
    return { episode, bytes: toBinary(EpisodeSchema, episode) };
  }
  return { episode: fromBinary(EpisodeSchema, data), bytes: new Uint8Array(data) };
}

function firstByteDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

async function compare(a: string, b: string): Promise<number> {
  const [x, y] = await Promise.all([readEpisodeFile(a), readEpisodeFile(b)]);
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
async function fetchEpisodeBytes(target: ClientTarget, session: string, token: string | undefined): Promise<Uint8Array> {
  const client = createControlClient(target.addr, { token, credentials: target.creds, channelOptions: target.channelOptions });
  try {
    return (await client.exportEpisode(session)).bytes;
  } catch (err) {
    if (!(err instanceof ModelCallError && err.code === Code.UNIMPLEMENTED)) throw err;
    return (await client.call<GetEpisodeResponse>("GetEpisode", { session, bytesOnly: true })).episodeBinpb;
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
      ({ episode: ep, bytes } = await readEpisodeFile(positionals[0]));
    } else {
      const target = await clientTarget(options, sources["addr"] === "default");
      bytes = await fetchEpisodeBytes(target, String(options["session"]), options["control-token"] as string | undefined);
      ep = fromBinary(EpisodeSchema, bytes);
    }
    if (options["out"]) await writeFile(String(options["out"]), bytes);
    process.stdout.write(`${toJsonString(EpisodeSchema, ep ?? create(EpisodeSchema), { prettySpaces: 2, useProtoFieldName: true })}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub episode: ${err.message}\n\n${usage}`);
      return 2;
    }
    const e = err as NodeJS.ErrnoException & { code?: unknown };
    process.stderr.write(`modelstub episode: ${e.message}\n`);
    return 2;
  }
}
