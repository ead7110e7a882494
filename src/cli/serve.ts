import { createRealClock, createVirtualClock } from "../engine/clock.js";
import type { CompiledScript } from "../script/compiled-script.js";
import { createStub, type Stub } from "../engine/create-stub.js";
import { defaultScript } from "../script/default-script.js";
import { ScriptError } from "../script/script-error.js";
import { isLoopbackHost } from "../grpc/is-loopback-host.js";
import { splitAddress } from "../grpc/start-grpc-server.js";
import { callRecordOf } from "../http/http-log.js";
import { createLogger } from "../log/create-logger.js";
import { createRecorder, type Recorder } from "../episode-files/create-recorder.js";
import { ListenError, startFronts, type Fronts } from "../server/start-fronts.js";
import { shutdownGracefully } from "../server/shutdown-gracefully.js";
import { catchStopSignals } from "./catch-stop-signals.js";
import { configurationFields, logFormatOf, logLevelOf } from "./log-level-of.js";
import { durationOption, intOption, resolveOptions, UsageError } from "./options.js";
import { checkRecordDir, httpHostOf, listenProblem, ServeError } from "./serve-error.js";
import { serveOptions } from "./serve-options.js";
import { serveUsage } from "./serve-usage.js";
import { startIdleEviction } from "./start-idle-eviction.js";
import { startLoopReport } from "./start-loop-report.js";
import { instanceIdProblem } from "../engine/instance-id.js";
import { TlsFileError, tlsCredentials } from "./tls-credentials.js";

/** The host and port of a bound `HOST:PORT`, as log fields (`[::1]:50051` gives host `::1`). */
function addressFields(address: string): { host: string; port: number } {
  const { host, port } = splitAddress(address);
  return { host: host.replace(/^\[(.*)\]$/, "$1"), port };
}

/** `modelstub serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0. */
export async function serve(argv: string[]): Promise<number> {
  let options;
  let sources;
  try {
    ({ options, sources } = resolveOptions(serveOptions, argv));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub serve: ${err.message}\n\n${serveUsage}`);
      return 2;
    }
    throw err;
  }
  if (options["help"]) {
    process.stdout.write(serveUsage);
    return 0;
  }
  // Signals are caught from here on, before anything listens: a SIGTERM that lands between the
  // "listening" line and the wait below still gets a graceful shutdown, never Node's default kill.
  const stopSignal = catchStopSignals();
  const format = logFormatOf(options);
  const logger = createLogger({ level: logLevelOf(options, sources), format });
  // Asked for by name (--log-format json, MODELSTUB_LOG_FORMAT=json): the start-up and failure
  // lines are JSON too. `auto` keeps them as text, the lines scripts have always waited on.
  const jsonLines = options["log-format"] === "json";
  /**
   * A line `serve` always prints, whatever the log level (start-up, listening): the line it has
   * always printed, `modelstub: TEXT`; with --log-format json one object with its
   * fields, so a pipeline reads every stderr line as JSON. After the log lines queued before it.
   */
  const say = (text: string, msg: string, fields: Record<string, unknown>) => {
    logger.flush();
    process.stderr.write(jsonLines ? `${JSON.stringify({ level: "info", msg, ...fields })}\n` : `modelstub: ${text}\n`);
  };
  /** A failure `serve` exits on: `modelstub serve: MESSAGE`, or an error object with --log-format json. */
  const fail = (message: string, fields: Record<string, unknown>) => {
    logger.flush();
    process.stderr.write(jsonLines ? `${JSON.stringify({ level: "error", msg: message, ...fields })}\n` : `modelstub serve: ${message}\n`);
  };
  logger.debug("configuration", configurationFields(options, sources));
  let fronts: Fronts | undefined;
  let stub: Stub;
  let recorder: Recorder;
  let stopEviction = () => {};
  let stopLoopReport = () => {};
  try {
    const grpcAddress = options["grpc"];
    const { host } = splitAddress(grpcAddress);
    const controlToken = options["control-token"] || undefined;
    if (!isLoopbackHost(host) && !controlToken) {
      throw new ServeError(
        `refusing to serve ControlService on ${grpcAddress} without a token: it can replace scripts and read episodes. Set --control-token (or MODELSTUB_CONTROL_TOKEN), or bind a loopback address`,
      );
    }
    // The HTTP front has no ControlService, but off loopback anyone could drive its sessions
    // and fill its caps: the same rule, and the token becomes its bearer token (the SDKs' apiKey).
    const httpAddress = options["http"] || undefined;
    const httpExposed = httpAddress !== undefined && !isLoopbackHost(httpHostOf(httpAddress));
    if (httpExposed && !controlToken) {
      throw new ServeError(
        `refusing to serve HTTP on ${httpAddress} without a token: anyone who reaches it can drive its sessions. Set --control-token (or MODELSTUB_CONTROL_TOKEN), which every HTTP request must then send as \`authorization: Bearer TOKEN\`, or bind a loopback address`,
      );
    }
    const instance = options["instance"] || undefined;
    const badInstance = instance === undefined ? undefined : instanceIdProblem(instance);
    if (badInstance) throw new UsageError(`--instance: ${badInstance}`);
    const graceMs = durationOption(options, "grace", { example: "10s or 500ms" });
    const maxMessageBytes = intOption(options, "max-message-bytes");
    // Off unless given; 0 would evict every session between its calls.
    const idleTimeoutMs = durationOption(options, "session-idle-timeout", { example: "10m or 30s", allowZero: false });
    const loopWarnMs = durationOption(options, "loop-warn", { example: "100ms, or 0 for off" });
    let credentials;
    try {
      credentials = await tlsCredentials(options["tls-cert"], options["tls-key"]);
    } catch (err) {
      if (err instanceof TlsFileError) throw new ServeError(err.message);
      throw err;
    }
    let script: CompiledScript;
    try {
      // The default script comes validated; a --script is checked in the compile worker, as LoadScript's are.
      script = options["script"] ? await (await import("../script/script-compiler.js")).compileScriptFile(options["script"]) : defaultScript();
      logger.debug("script loaded", { script: script.name, file: options["script"] ?? "(built-in default)", entries: script.entryCount });
    } catch (err) {
      if (err instanceof ScriptError) throw new ServeError(err.message);
      throw err;
    }
    const recordDir = options["record-dir"] || undefined;
    if (recordDir) await checkRecordDir(recordDir, logger);
    recorder = createRecorder(recordDir, logger);
    stub = createStub({
      script,
      clock: options["clock"] === "virtual" ? createVirtualClock() : createRealClock(),
      maxSessions: intOption(options, "max-sessions"),
      maxEpisodeCalls: intOption(options, "max-episode-calls"),
      maxEpisodeBytes: intOption(options, "max-episode-bytes"),
      ...(instance !== undefined ? { instance } : {}),
      ...(options["replay-mode"] !== undefined ? { replayMode: options["replay-mode"] } : {}),
      onEpisodeClosed: (e, why) => recorder.record(e, why),
    });
    try {
      fronts = await startFronts({
        stub,
        grpc: { address: grpcAddress, credentials, controlToken, logger, channelOptions: { "grpc.max_receive_message_length": maxMessageBytes } },
        ...(httpAddress
          ? {
              http: {
                address: httpAddress,
                log: (r) => logger.call(callRecordOf(r)),
                maxBodyBytes: maxMessageBytes,
                token: httpExposed ? controlToken : undefined,
                processingComments: options["openrouter-comments"],
              },
            }
          : {}),
      });
    } catch (err) {
      if (err instanceof ListenError) throw new ServeError(listenProblem(err.address, err.front, err.error));
      throw err;
    }
    const { grpc, http } = fronts;
    say(
      `serving script ${JSON.stringify(script.name)} (${script.entryCount} ${script.entryCount === 1 ? "entry" : "entries"}, ${options["clock"]} clock)`,
      "serving script",
      {
        script: script.name,
        entries: script.entryCount,
        clock: options["clock"],
      },
    );
    say(`gRPC listening on ${grpc!.address}${credentials ? " (TLS)" : ""}`, "gRPC listening", {
      address: grpc!.address,
      ...addressFields(grpc!.address),
      tls: Boolean(credentials),
    });
    if (http)
      say(`HTTP listening on http://${http.address}`, "HTTP listening", {
        url: `http://${http.address}`,
        address: http.address,
        ...addressFields(http.address),
      });
    if (idleTimeoutMs !== undefined) stopEviction = startIdleEviction(stub, idleTimeoutMs, logger);
    if (loopWarnMs > 0) stopLoopReport = startLoopReport(loopWarnMs, logger);

    const signal = await stopSignal.received;
    stopEviction();
    stopLoopReport();
    logger.info("shutting down", { signal, in_flight: stub.inFlight(), grace_ms: graceMs });
    // A failed write is logged and counted by the recorder; shutdown goes on, and exits 1 below.
    const { finished, cutOff, written, failed, writeMs } = await shutdownGracefully({
      stub,
      fronts,
      recorder,
      graceMs,
      onGraceOver: () => logger.warn("grace period over: cutting off calls in flight", { in_flight: stub.inFlight() }),
    });
    if (!finished) logger.info("calls cut off", { calls: cutOff, code: "UNAVAILABLE" });
    logger.info("stopped", { episodes_written: written - failed, write_ms: writeMs, ...(failed > 0 ? { failed_writes: failed } : {}) });
    logger.flush();
    if (failed > 0) {
      // Episodes were lost: a supervisor or CI job must not take this run for a clean one.
      fail(
        `${failed} episode ${failed === 1 ? "write" : "writes"} to --record-dir ${recordDir} failed (see the "cannot record episode" lines): ${failed === 1 ? "that episode is" : "those episodes are"} lost; exiting 1`,
        { failed_writes: failed, exit_code: 1 },
      );
      return 1;
    }
    return 0;
  } catch (err) {
    stopEviction();
    stopLoopReport();
    stopSignal.release();
    await fronts?.close(0);
    if (err instanceof ServeError || err instanceof UsageError) {
      fail(err.message, { exit_code: 2 });
      return 2;
    }
    throw err;
  }
}
