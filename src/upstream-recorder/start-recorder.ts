import { mkdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { createVirtualClock } from "../engine/clock.js";
import { createStub } from "../engine/create-stub.js";
import { waitDrained } from "../engine/wait-drained.js";
import { startFronts } from "../server/start-fronts.js";
import { oversizeProblem, writeScriptFile } from "../script/write-script-file.js";
import { writeScript } from "../script/write-script.js";
import { noRedaction, type Redaction } from "./redact.js";
import { createRecordingStub, listingScript, type Recording } from "./recording-stub.js";
import type { Upstream } from "./upstream.js";
import type { MatchKind } from "../script/request-match-of.js";
import type { PriorScript } from "./prior-script.js";

/** Options of a recorder: where it listens, what it forwards to, and how it writes. */
export interface RecorderOptions {
  upstream: Upstream;
  /** gRPC `HOST:PORT` (ModelService, as `serve`); default 127.0.0.1:0. */
  grpc?: string;
  /** The OpenAI-compatible HTTP front's `HOST:PORT`; off when absent. */
  http?: string;
  /** The script written after every call (atomically) and at close(). */
  out?: string;
  /** Keep the upstream stream's text chunks as explicit `chunks` (default: the words rule). */
  keepChunks?: boolean;
  /** Record the observed latency of each call (default: none, so the replay answers at once). */
  latency?: boolean;
  redaction?: Redaction;
  /** The model a reply names when its request names none (default `modelstub`). */
  defaultModel?: string;
  /** A script to extend (`--record-mode new-episodes`): requests its entries match are answered from it, the others recorded after them. */
  prior?: PriorScript;
  /** What each entry keeps of its request (`--match`): readable (default), digest or none. */
  match?: MatchKind;
  /**
   * Told at once what goes wrong with `out` while recording (a failed write, a script past the
   * size limit), so nobody records for an hour into a file that will not serve; default stderr.
   */
  onWarning?: (message: string) => void;
}

/** A running recorder. */
export interface RunningRecorder {
  readonly grpcAddress: string;
  /** `http://HOST:PORT/v1` when `http` was given. */
  readonly httpUrl: string | undefined;
  readonly recording: Recording;
  /** The script recorded so far. */
  scriptText(): string;
  /** The long reply texts the script reads as `text_file`s, by name (relative to the script's folder; written beside `out`). */
  readonly textFiles: ReadonlyMap<string, string>;
  /** Why the script written to `out` cannot be served (it is past the size limit), or undefined. */
  readonly unservable: string | undefined;
  /**
   * Stops listening, lets calls in flight finish (up to `graceMs`, 5 s by default), writes `out`
   * a last time. A call whose upstream has not answered by then is answered and recorded
   * UNAVAILABLE ("modelstub record is shutting down").
   */
  close(graceMs?: number): Promise<void>;
}

/** How long the fronts get, after a shutdown cut off the calls still waiting for the upstream, to send those calls their answers. */
const cutOffAnswerMs = 1000;

/**
 * Starts a recorder: the fronts `serve` has (gRPC ModelService, and the HTTP front when `http`
 * is given), every model call forwarded to the upstream and recorded as the next entry of the
 * script, which is written to `out` after each call and at close(). ControlService answers too,
 * from a stub of its own: the recorder keeps no episodes (replay the script to get them).
 */
export async function startRecorder(options: RecorderOptions): Promise<RunningRecorder> {
  const defaultModel = options.defaultModel || "modelstub";
  const inner = createStub({ script: listingScript([defaultModel]), clock: createVirtualClock() });
  const warn = options.onWarning ?? ((message: string) => void process.stderr.write(`modelstub record: ${message}\n`));
  let writes: Promise<void> = Promise.resolve();
  // text_files already on disk: each is written once, before the first script that names it.
  const written = new Set<string>();
  let writeError: Error | undefined;
  let unservable: string | undefined;
  const write = () => {
    if (options.out === undefined || stub.recording.calls === 0) return writes;
    const out = options.out;
    const text = writeScript(stub.recording.draft());
    // Said once, when it first happens: the script only grows, and every later write is as big.
    if (unservable === undefined && (unservable = oversizeProblem(text))) warn(`${out}: ${unservable}; recording goes on, and record exits 1 at the end`);
    // One write at a time, in call order: the file always ends with the latest script.
    const files = [...stub.recording.textFiles].filter(([name]) => !written.has(name));
    writes = writes
      .then(async () => {
        for (const [name, body] of files) {
          const path = join(dirname(out), name);
          // One level, beside --out: a missing --out folder stays an error, not created here.
          await mkdir(dirname(path)).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== "EEXIST") throw err;
          });
          await writeScriptFile(path, body);
          written.add(name);
        }
      })
      .then(() => writeScriptFile(out, text))
      .then(
        () => void (writeError = undefined),
        (err: Error) => {
          // Said at once, and once until a write succeeds again, not after every call.
          if (!writeError) warn(`${err.message}; recording goes on, and the script is written again after the next call`);
          writeError = err;
        },
      );
    return writes;
  };
  const stub = createRecordingStub({
    upstream: options.upstream,
    inner,
    defaultModel,
    keepChunks: options.keepChunks === true,
    latency: options.latency === true,
    redaction: options.redaction ?? noRedaction,
    ...(options.match !== undefined ? { match: options.match } : {}),
    ...(options.prior !== undefined ? { prior: options.prior } : {}),
    // recorded.yaml's long texts go to recorded.replies/call-N.txt.
    ...(options.out !== undefined ? { textFileDir: `${basename(options.out).replace(/\.(ya?ml|json)$/i, "")}.replies` } : {}),
    onRecorded: () => void write(),
  });
  const grpcAddress = options.grpc ?? "127.0.0.1:0";
  // A front that cannot listen rejects with a ListenError (server/start-fronts.ts), nothing left listening.
  const fronts = await startFronts({
    stub,
    grpc: { address: grpcAddress, reflection: true },
    ...(options.http !== undefined ? { http: { address: options.http, log: () => {} } } : {}),
  });
  const grpc = fronts.grpc!;
  const { http } = fronts;
  let closing: Promise<void> | undefined;
  return {
    grpcAddress: grpc.address,
    httpUrl: http ? `http://${http.address}/v1` : undefined,
    recording: stub.recording,
    scriptText: () => writeScript(stub.recording.draft()),
    textFiles: stub.recording.textFiles,
    get unservable() {
      return unservable;
    },
    close(graceMs = 5000) {
      closing ??= (async () => {
        grpc.health.set("NOT_SERVING");
        stub.drain();
        const drained = await waitDrained(stub, graceMs);
        let leftMs = drained.leftMs;
        if (!drained.finished) {
          // Past the grace: the calls still waiting for the upstream are cut off and answered
          // UNAVAILABLE while the fronts still listen, rather than reset by their closing.
          stub.cutOffUpstream();
          ({ leftMs } = await waitDrained(stub, cutOffAnswerMs));
        }
        await Promise.all([grpc.close(leftMs), http?.close(leftMs)]);
        options.upstream.close();
        await write();
        if (writeError) throw new Error(`modelstub record: ${writeError.message}`);
      })();
      return closing;
    },
  };
}
