import { rename, writeFile } from "node:fs/promises";
import { createVirtualClock } from "../engine/clock.js";
import { createStub } from "../engine/create-stub.js";
import { waitDrained } from "../engine/wait-drained.js";
import { startGrpcServer, type RunningGrpcServer } from "../grpc/start-grpc-server.js";
import { startHttpServer, type RunningHttpServer } from "../http/start-http-server.js";
import { loadScriptText } from "../script/load-script.js";
import { writeScript } from "../script/write-script.js";
import { noRedaction, type Redaction } from "./redact.js";
import { createRecordingStub, type Recording } from "./recording-stub.js";
import type { Upstream } from "./upstream.js";

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
}

/** A running recorder. */
export interface RunningRecorder {
  readonly grpcAddress: string;
  /** `http://HOST:PORT/v1` when `http` was given. */
  readonly httpUrl: string | undefined;
  readonly recording: Recording;
  /** The script recorded so far. */
  scriptText(): string;
  /** Stops listening, lets calls in flight finish (up to `graceMs`), writes `out` a last time. */
  close(graceMs?: number): Promise<void>;
}

/** Writes `text` to `path` atomically: a temp file beside it, then a rename. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, text);
  await rename(temp, path);
}

/**
 * Starts a recorder: the fronts `serve` has (gRPC ModelService, and the HTTP front when `http`
 * is given), every model call forwarded to the upstream and recorded as the next entry of the
 * script, which is written to `out` after each call and at close(). ControlService answers too,
 * from a stub of its own: the recorder keeps no episodes (replay the script to get them).
 */
export async function startRecorder(options: RecorderOptions): Promise<RunningRecorder> {
  const defaultModel = options.defaultModel || "modelstub";
  const listed = loadScriptText(`name: modelstub record\nmodels: [{ id: ${JSON.stringify(defaultModel)} }]\nentries:\n  - repeat: true\n    reply: ""\n`, "modelstub record");
  const inner = createStub({ script: listed, clock: createVirtualClock() });
  let writes: Promise<void> = Promise.resolve();
  let writeError: unknown;
  const write = () => {
    if (options.out === undefined || stub.recording.calls === 0) return writes;
    const text = writeScript(stub.recording.draft());
    // One write at a time, in call order: the file always ends with the latest script.
    writes = writes.then(() => writeAtomically(options.out!, text)).catch((err) => void (writeError = err));
    return writes;
  };
  const stub = createRecordingStub({
    upstream: options.upstream,
    inner,
    defaultModel,
    keepChunks: options.keepChunks === true,
    latency: options.latency === true,
    redaction: options.redaction ?? noRedaction,
    onRecorded: () => void write(),
  });
  const grpc: RunningGrpcServer = await startGrpcServer({ stub, address: options.grpc ?? "127.0.0.1:0", reflection: true });
  let http: RunningHttpServer | undefined;
  if (options.http !== undefined) {
    try {
      http = await startHttpServer({ stub, address: options.http, log: () => {} });
    } catch (err) {
      await grpc.close(0);
      throw err;
    }
  }
  let closing: Promise<void> | undefined;
  return {
    grpcAddress: grpc.address,
    httpUrl: http ? `http://${http.address}/v1` : undefined,
    recording: stub.recording,
    scriptText: () => writeScript(stub.recording.draft()),
    close(graceMs = 5000) {
      closing ??= (async () => {
        grpc.health.set("NOT_SERVING");
        stub.drain();
        const { leftMs } = await waitDrained(stub, graceMs);
        await Promise.all([grpc.close(leftMs), http?.close(0)]);
        options.upstream.close();
        await write();
        if (writeError) throw new Error(`modelstub record: cannot write ${options.out}: ${(writeError as Error).message}`);
      })();
      return closing;
    },
  };
}
