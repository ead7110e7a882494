import { createRealClock, createVirtualClock } from "../engine/clock.js";
import type { CompiledScript } from "../script/compiled-script.js";
import { createStub } from "../engine/create-stub.js";
import { defaultScript } from "../script/default-script.js";
import { isLoopbackHost } from "../grpc/is-loopback-host.js";
import { createLogger, type LogFormat, type LogLevel } from "../log/create-logger.js";
import { createInProcessPort } from "../port/in-process-port.js";
import type { Recorder } from "../episode-files/create-recorder.js";
import type { ModelPort } from "../port/model-port.js";
import { loadScriptFile } from "../script/load-script.js";
import { compileSource, type ScriptSource } from "./script-source.js";
import { createStubControl, type StubControl } from "./stub-control.js";
import { ListenError, startFronts } from "../server/start-fronts.js";
import { shutdownGracefully } from "../server/shutdown-gracefully.js";

// gRPC (grpc-js and the services), the HTTP front and the episode files are imported when a
// server uses them, not when `modelstub` is imported: a test file that only calls
// loadScript() or the in-process port (`grpc: false`) never loads grpc-js (docs/library.md,
// "What loads when"). Each import() is its own chunk of the library bundle (rolldown.config.mjs);
// startFronts imports the fronts the same way.
const loadGrpcServer = () => import("../grpc/start-grpc-server.js");
const loadGrpcPort = () => import("../port/grpc-port.js");
const loadHttpServer = () => import("../http/start-http-server.js");

/** The recorder of a server without a recordDir: it records nothing and never fails (as createRecorder without a dir). */
const noRecorder: Recorder = { record: async () => undefined, prepare: () => undefined, settled: async () => undefined, failures: () => 0 };

/** What startServer() serves, and where. Every field is optional. */
export interface StartServerOptions {
  /**
   * The script: YAML or JSON text, a script object (`{ entries: [...] }`), or a script
   * loadScript() compiled. Without it (and without `scriptFile`), the built-in default script.
   */
  script?: ScriptSource;
  /** A script file to serve instead (YAML, or strict JSON when named .json), as `--script`. */
  scriptFile?: string;
  /**
   * gRPC `HOST:PORT`; port 0 picks a free one. Default `127.0.0.1:0`. `false`: no gRPC server
   * (nor grpc-js loaded): `inProcess()`, `control` and `http` only.
   */
  grpc?: string | false;
  /** The OpenAI-compatible HTTP front's `HOST:PORT` (port 0 allowed); off when absent. */
  http?: string;
  /** `real` (default): scripted latencies take real time. `virtual`: they complete at once and the episode records the same. */
  clock?: "real" | "virtual";
  /** Writes each closed episode (reset, reload, deletion, close()) there as `SESSION.episode.binpb`, as `--record-dir`. */
  recordDir?: string;
  /**
   * Required as `authorization: Bearer TOKEN` on ControlService calls over gRPC (and on every
   * HTTP request when `http` is not loopback). A non-loopback address without it is refused,
   * as by `modelstub serve`. `control` (in process) needs none.
   */
  controlToken?: string;
  /** How requests are held to entries' recorded `request:`, over each script's `replay.mode`, as `--replay-mode`. */
  replayMode?: "strict" | "unordered" | "order-only";
  /** Sessions kept at most (default 1,000), as `--max-sessions`. */
  maxSessions?: number;
  /** Calls one episode records at most (default 100,000), as `--max-episode-calls`. */
  maxEpisodeCalls?: number;
  /** Bytes one episode records at most (default 64 MiB), as `--max-episode-bytes`. */
  maxEpisodeBytes?: number;
  /** Largest gRPC request and HTTP body accepted (default 4 MiB), as `--max-message-bytes`. */
  maxMessageBytes?: number;
  /**
   * This server's id in every answer's x-modelstub-instance header and episode ids, as
   * `--instance` (default: host name and process id).
   */
  instance?: string;
  /** Log lines on stderr at this level and above. Default `warn`: a test run stays quiet. */
  logLevel?: LogLevel;
  /** `text` (default) or `json` log lines. */
  logFormat?: LogFormat;
}

/** A running modelstub server, started by startServer(). */
export interface StubServer {
  /** gRPC `HOST:PORT` as bound (the real port when 0 was asked): give it to the code under test. `""` with `grpc: false`. */
  readonly grpcAddress: string;
  /** `http://HOST:PORT/v1` when `http` was given (an OpenAI client's `baseURL`), else undefined. */
  readonly httpUrl: string | undefined;
  /** The HTTP front's `HOST:PORT` as bound, when `http` was given. */
  readonly httpAddress: string | undefined;
  /** The name of the script the server started with, and its entries. */
  readonly script: { readonly name: string; readonly entries: number };
  /** ControlService's operations, in process: load a script, episode bytes, reset, verify, delete. */
  readonly control: StubControl;
  /**
   * A new ModelPort calling this server over real gRPC (HTTP/2 on a socket). Closed by
   * close(), or earlier by its own close(). Throws with `grpc: false`.
   */
  client(): ModelPort;
  /** A ModelPort calling the same engine in process: no socket, same sessions and episodes. */
  inProcess(): ModelPort;
  /**
   * Shuts down gracefully, as `modelstub serve` on SIGTERM: new calls are refused, calls in
   * flight get `graceMs` (default 5,000) and are then cut off (`UNAVAILABLE`, recorded so in
   * their episodes), every episode with calls is
   * written to `recordDir`, and the ports from client() are closed. Rejects when an episode
   * could not be written. Calling it again returns the same promise.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

const defaultGraceMs = 5_000;

/** Waits until no call is in flight, or until `ms` pass; true when they all finished. */
async function scriptOf(options: StartServerOptions): Promise<CompiledScript> {
  if (options.script !== undefined && options.scriptFile !== undefined) throw new TypeError("startServer: give `script` or `scriptFile`, not both");
  if (options.scriptFile !== undefined) return loadScriptFile(options.scriptFile);
  if (options.script !== undefined) return compileSource(options.script);
  return defaultScript();
}

/** The refusal `modelstub serve` gives an exposed address without a token, as an Error. */
function checkExposure(what: string, address: string, host: string, token: string | undefined): void {
  if (token || isLoopbackHost(host)) return;
  throw new Error(`startServer: refusing to serve ${what} on ${address} without a token: set controlToken, or bind a loopback address`);
}

/**
 * Starts a modelstub server in this process: the engine `modelstub serve` runs, over gRPC
 * (ModelService, ControlService, health, reflection) and optionally the OpenAI HTTP front.
 * Resolves once it listens. Rejects with a ScriptError for a script that is not valid (the
 * CLI's diagnostics), or an Error for an address that cannot be bound or a recordDir that
 * cannot be written; nothing is left listening then.
 *
 * @example
 * const server = await startServer({ script: "entries:\n  - reply: Hello\n", clock: "virtual" });
 * const model = server.client();
 * const reply = await model.generate({ messages: [{ role: Role.USER, content: "hi" }] }, { session: "t1" });
 * await server.close();
 */
export async function startServer(options: StartServerOptions = {}): Promise<StubServer> {
  const grpcAddress = options.grpc === false ? undefined : (options.grpc ?? "127.0.0.1:0");
  const token = options.controlToken || undefined;
  const [grpcServer, grpcPort, httpServer] = await Promise.all([
    grpcAddress !== undefined ? loadGrpcServer() : undefined,
    grpcAddress !== undefined ? loadGrpcPort() : undefined,
    options.http !== undefined ? loadHttpServer() : undefined,
  ]);
  if (grpcAddress !== undefined) checkExposure("ControlService", grpcAddress, grpcServer!.splitAddress(grpcAddress).host, token);
  if (options.http !== undefined) checkExposure("HTTP", options.http, httpServer!.parseHttpAddress(options.http).host, token);
  const script = await scriptOf(options);
  const logger = createLogger({ level: options.logLevel ?? "warn", format: options.logFormat ?? "text" });
  let recorder = noRecorder;
  if (options.recordDir) {
    const [{ prepareRecordDir }, { createRecorder }] = await Promise.all([
      import("../episode-files/prepare-record-dir.js"),
      import("../episode-files/create-recorder.js"),
    ]);
    // Checked before anything listens: a directory that cannot be written refuses the start,
    // rather than every episode being lost at close().
    await prepareRecordDir(options.recordDir);
    recorder = createRecorder(options.recordDir, logger);
  }
  const maxMessageBytes = options.maxMessageBytes ?? 4 * 1024 * 1024;
  const stub = createStub({
    script,
    clock: options.clock === "virtual" ? createVirtualClock() : createRealClock(),
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.maxEpisodeCalls !== undefined ? { maxEpisodeCalls: options.maxEpisodeCalls } : {}),
    ...(options.maxEpisodeBytes !== undefined ? { maxEpisodeBytes: options.maxEpisodeBytes } : {}),
    ...(options.instance !== undefined ? { instance: options.instance } : {}),
    ...(options.replayMode !== undefined ? { replayMode: options.replayMode } : {}),
    onEpisodeClosed: (e, why) => recorder.record(e, why),
  });
  const callRecordOf = options.http !== undefined ? (await import("../http/http-log.js")).callRecordOf : undefined;
  const fronts = await startFronts({
    stub,
    ...(grpcAddress !== undefined
      ? { grpc: { address: grpcAddress, controlToken: token, logger, channelOptions: { "grpc.max_receive_message_length": maxMessageBytes } } }
      : {}),
    ...(options.http !== undefined
      ? {
          http: {
            address: options.http,
            log: (r) => logger.call(callRecordOf!(r)),
            maxBodyBytes: maxMessageBytes,
            token: isLoopbackHost(httpServer!.parseHttpAddress(options.http).host) ? undefined : token,
          },
        }
      : {}),
  }).catch((err: unknown) => {
    // Say which address: a busy port is refused before grpc-js binds (refuse-busy-port.ts).
    if (err instanceof ListenError) throw new Error(`startServer: ${err.message}`, { cause: err.error });
    throw err;
  });
  const { grpc, http } = fronts;

  const clients = new Set<ModelPort>();
  let closing: Promise<void> | undefined;
  const shutdown = async (graceMs: number): Promise<void> => {
    // `modelstub serve`'s shutdown; the ports from client() close with the fronts.
    const { failed } = await shutdownGracefully({
      stub,
      fronts,
      recorder,
      graceMs,
      afterFrontsClosed: () => {
        for (const c of clients) c.close();
      },
    });
    logger.flush();
    if (failed > 0)
      throw new Error(
        `modelstub: ${failed} episode${failed === 1 ? "" : "s"} could not be written to ${options.recordDir} (see the "cannot record episode" lines on stderr)`,
      );
  };

  return {
    grpcAddress: grpc?.address ?? "",
    httpAddress: http?.address,
    httpUrl: http ? `http://${http.address}/v1` : undefined,
    script: { name: script.name, entries: script.entryCount },
    control: createStubControl(stub),
    client() {
      if (!grpc) throw new Error("startServer: this server has no gRPC (grpc: false): call inProcess(), or start it with a grpc address");
      const port = grpcPort!.openGrpcPort(grpc.address);
      const tracked: ModelPort = {
        generate: (r, o) => port.generate(r, o),
        generateStream: (r, o) => port.generateStream(r, o),
        listModels: (o) => port.listModels(o),
        close() {
          clients.delete(tracked);
          port.close();
        },
      };
      clients.add(tracked);
      return tracked;
    },
    inProcess: () => createInProcessPort(stub),
    close(closeOptions) {
      closing ??= shutdown(closeOptions?.graceMs ?? defaultGraceMs);
      return closing;
    },
  };
}
