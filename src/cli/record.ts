import { isLoopbackHost } from "../grpc/is-loopback-host.js";
import { splitAddress } from "../grpc/start-grpc-server.js";
import { parseHttpAddress } from "../http/start-http-server.js";
import { createGrpcUpstream } from "../upstream-recorder/grpc-upstream.js";
import { createOpenAiUpstream } from "../upstream-recorder/openai-upstream.js";
import { startRecorder } from "../upstream-recorder/start-recorder.js";
import { ListenError } from "../server/start-fronts.js";
import type { Upstream, UpstreamOptions } from "../upstream-recorder/upstream.js";
import { whyUnwritable } from "../script/write-script-file.js";
import { catchStopSignals } from "./catch-stop-signals.js";
import { durationOption, formatOptionsHelp, resolveOptions, UsageError, type OptionSpec } from "./options.js";
import { listenProblem } from "./serve-error.js";
import { stat } from "node:fs/promises";
import { readPriorScript, type PriorScript } from "../upstream-recorder/prior-script.js";
import { ScriptError } from "../script/script-error.js";
import { errorText } from "../shared/status-error.js";

/** The recorder's --grpc default, serve's too: a replay command leaves it out. */
const defaultGrpc = "127.0.0.1:50051";

const specs = [
  {
    name: "upstream",
    type: "string",
    arg: "URL",
    description:
      "The real model: an OpenAI-compatible base URL (http://127.0.0.1:8000/v1, https://api.openai.com/v1), or grpc://HOST:PORT for a ModelService (another modelstub, a gateway).",
  },
  { name: "out", type: "string", arg: "FILE", description: "The script written: after every call (atomically) and at shutdown." },
  {
    name: "grpc",
    type: "string",
    arg: "HOST:PORT",
    default: defaultGrpc,
    description: "Where clients call the recorder over gRPC, as `serve --grpc`. Loopback only.",
  },
  { name: "http", type: "string", arg: "HOST:PORT", description: "Also serve the HTTP front here, as `serve --http`. Loopback only. Off unless given." },
  {
    name: "upstream-key-env",
    type: "string",
    arg: "NAME",
    description: "Read the upstream's API key from this environment variable; it is sent upstream as `authorization: Bearer KEY` and nowhere else.",
  },
  {
    name: "model",
    type: "string",
    arg: "ID",
    description: "The model sent upstream when a request names none (and named in those replies, as the script's defaults.model).",
  },
  {
    name: "redact",
    type: "string",
    arg: "NAMES",
    description: "Comma-separated header and JSON field names to keep out of the script (recorded trailers, tool call arguments at any depth).",
  },
  { name: "keep-chunks", type: "boolean", description: "Keep the upstream stream's text chunks as explicit `chunks` (default: the words rule)." },
  {
    name: "latency",
    type: "boolean",
    description: "Record each call's observed latency (first byte and per chunk for a stream); default none, so the replay answers at once.",
  },
  {
    name: "match",
    type: "string",
    arg: "KIND",
    values: ["readable", "digest", "none"],
    default: "readable",
    description:
      "What each entry keeps of the request it answered, as `request:`, which a replay holds requests to: readable (the last user text, the tool results since the last assistant turn, the tools offered), digest (sha256 of the canonical request), or none (order only, as before).",
  },
  {
    name: "record-mode",
    type: "string",
    arg: "MODE",
    values: ["all", "new-episodes"],
    default: "all",
    description:
      "all: every call goes upstream and --out is written afresh; new-episodes: when --out exists, a request one of its unused entries matches is answered from it (the upstream never sees it), the others go upstream and are recorded after its entries, as vcrpy's new_episodes.",
  },
  {
    name: "upstream-timeout",
    type: "string",
    arg: "DURATION",
    default: "60s",
    description:
      "A unary call not answered in full by then, or a stream silent that long (before its first byte, or between two reads), is recorded as a timeout: `timeout: true`, or after some chunks a break with DEADLINE_EXCEEDED.",
  },
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];

const usage = `usage: modelstub record --upstream URL --out FILE [options]

Serves the fronts \`serve\` serves (gRPC ModelService, and the HTTP front with --http) and
forwards every model call to a real model, recording each answer as the next entry of a script:
by step id when the call names one, in call order otherwise. Clients see what the replay will
send (ids, tool call ids, chunks). Upstream errors become scripted errors of the same status
(429 with its retry hints), timeouts \`timeout: true\`. Stop it with SIGTERM or SIGINT: it writes
FILE and prints the command that replays it. One session is recorded, the first that calls.
Exit codes: 0 stopped and written, 1 the script could not be written or is past the 512 KiB
script limit (written, but serve refuses it), or an upstream answer could not be recorded (an
INTERNAL error stands in; each such call is listed), 2 bad arguments, an --out whose folder is missing
or not writable, or an address that cannot be bound.

${formatOptionsHelp(specs)}
`;

/** The upstream an --upstream URL names. */
function upstreamOf(url: string, o: UpstreamOptions): Upstream {
  if (url.startsWith("grpc://")) return createGrpcUpstream(url.slice("grpc://".length), o);
  if (/^https?:\/\/[^/]/.test(url)) {
    try {
      return createOpenAiUpstream(url, o);
    } catch (err) {
      // Its message never repeats the URL, which may hold a password.
      throw new UsageError(`--upstream: ${errorText(err)}`);
    }
  }
  throw new UsageError(`--upstream must be an http(s):// base URL (like http://127.0.0.1:8000/v1) or grpc://HOST:PORT, not ${JSON.stringify(url)}`);
}

/** A word as a POSIX shell reads it back: as is when it holds nothing the shell treats specially, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command that replays the script as it was recorded: the same fronts on the same
 * addresses, and with --latency the virtual clock, which keeps the declared times on the
 * episode's timeline without waiting them out (docs/record.md replays so).
 */
function replayCommand(out: string, o: { grpc: string; http: string | undefined; latency: boolean }): string {
  const args = ["--script", out];
  if (o.latency) args.push("--clock", "virtual");
  if (o.grpc !== defaultGrpc) args.push("--grpc", o.grpc);
  if (o.http !== undefined) args.push("--http", o.http);
  return `modelstub serve ${args.map(shellWord).join(" ")}`;
}

function loopback(name: string, host: string): void {
  if (!isLoopbackHost(host)) throw new UsageError(`--${name} must be a loopback address: the recorder holds your upstream credentials and takes no token`);
}

/** `modelstub record`: a recording proxy, until SIGTERM or SIGINT. */
export async function record(argv: string[]): Promise<number> {
  let stop: ReturnType<typeof catchStopSignals> | undefined;
  try {
    const { options } = resolveOptions(specs, argv);
    if (options["help"]) {
      process.stdout.write(usage);
      return 0;
    }
    const url = options["upstream"];
    const out = options["out"];
    if (!url) throw new UsageError("give --upstream URL: the model to record");
    if (!out) throw new UsageError("give --out FILE: where the script goes");
    // Checked now: found at the first write, or at shutdown, the whole recording would be lost.
    const unwritable = await whyUnwritable(out);
    if (unwritable) throw new UsageError(`--out ${out} cannot be written: ${unwritable}`);
    const keyEnv = options["upstream-key-env"];
    const apiKey = keyEnv !== undefined ? process.env[keyEnv] : undefined;
    if (keyEnv !== undefined && !apiKey) throw new UsageError(`--upstream-key-env: the variable ${keyEnv} is not set`);
    const grpc = options["grpc"];
    loopback("grpc", splitAddress(grpc).host);
    const http = options["http"];
    if (http !== undefined) loopback("http", parseHttpAddress(http).host);
    const model = options["model"];
    const timeoutMs = durationOption(options, "upstream-timeout", { example: "60s", allowZero: false });
    const names = (options["redact"] ?? "")
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== "");
    let prior: PriorScript | undefined;
    if (options["record-mode"] === "new-episodes" && (await stat(out).catch(() => undefined))) {
      try {
        prior = await readPriorScript(out);
      } catch (err) {
        if (!(err instanceof ScriptError)) throw err;
        process.stderr.write(`modelstub record: --record-mode new-episodes extends ${out}, which does not load:\n${err.message}\n`);
        return 2;
      }
    }
    const upstream = upstreamOf(url, { apiKey, model, timeoutMs });
    stop = catchStopSignals();
    let recorder;
    try {
      recorder = await startRecorder({
        upstream,
        grpc,
        http,
        out,
        keepChunks: options["keep-chunks"],
        latency: options["latency"],
        redaction: { secrets: apiKey ? [apiKey] : [], names: new Set([...names, ...names.map((n) => n.toLowerCase())]) },
        defaultModel: model,
        match: options["match"],
        ...(prior ? { prior } : {}),
      });
    } catch (err) {
      upstream.close();
      // Said as serve says it, naming the flag to change when the address is busy.
      const problem = err instanceof ListenError ? listenProblem(err.address, err.front, err.error) : `cannot listen: ${(err as Error).message}`;
      process.stderr.write(`modelstub record: ${problem}\n`);
      return 2;
    }
    process.stderr.write(`modelstub record: recording ${upstream.describe} into ${out}\n`);
    process.stderr.write(`modelstub record: gRPC listening on ${recorder.grpcAddress}\n`);
    if (recorder.httpUrl) process.stderr.write(`modelstub record: HTTP listening on ${recorder.httpUrl.replace(/\/v1$/, "")}\n`);
    await stop.received;
    try {
      await recorder.close();
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      return 1;
    }
    const calls = recorder.recording.calls;
    const session = recorder.recording.session;
    if (calls === 0) {
      process.stderr.write(`modelstub record: no calls were made; ${out} was not written\n`);
      return 0;
    }
    process.stderr.write(`modelstub record: wrote ${out}: ${calls} call${calls === 1 ? "" : "s"} of session "${session}"\n`);
    if (recorder.unservable) {
      // No replay command: serve would refuse the file.
      process.stderr.write(`modelstub record: ${out} cannot be replayed: ${recorder.unservable}; record fewer calls per script\n`);
      return 1;
    }
    process.stdout.write(`${replayCommand(out, { grpc, http, latency: options["latency"] })}\n`);
    const unrecorded = recorder.recording.unrecorded;
    if (unrecorded.length > 0) {
      // The script replays what the client got, but that was an error in place of the upstream's answer.
      process.stderr.write(
        `modelstub record: ${unrecorded.length} upstream answer${unrecorded.length === 1 ? "" : "s"} could not be recorded (an INTERNAL error stands in, as the client got it):\n`,
      );
      for (const u of unrecorded) process.stderr.write(`  ${u}\n`);
      return 1;
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub record: ${err.message}\n\n${usage}`);
      return 2;
    }
    throw err;
  } finally {
    stop?.release();
  }
}
