import { ServerCredentials } from "@grpc/grpc-js";
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { createRealClock, createVirtualClock } from "../engine/clock.js";
import type { CompiledScript } from "../engine/compile-script.js";
import { createStub, type Stub } from "../engine/create-stub.js";
import { defaultScript } from "../engine/default-script.js";
import { loadScriptFile } from "../engine/load-script.js";
import { parseDuration } from "../engine/parse-duration.js";
import { ScriptError } from "../engine/script-error.js";
import { splitAddress, startGrpcServer, type RunningGrpcServer } from "../grpc/start-grpc-server.js";
import { startHttpServer, type RunningHttpServer } from "../http/start-http-server.js";
import { createLogger, type LogFormat, type LogLevel, type Logger } from "../log/create-logger.js";
import { writeEpisodeFile } from "../record/write-episode-file.js";
import { formatOptionsHelp, intOption, resolveOptions, UsageError, type ResolvedOptions } from "./options.js";
import { serveOptions } from "./serve-options.js";

const usage = `usage: modelstub serve [options]

Serves a script as modelstub.v1.ModelService and ControlService over gRPC (with health and
reflection), and optionally as the OpenAI chat-completions dialect over HTTP. Every option can
also be set by the environment variable named beside it; a flag wins over its variable.

${formatOptionsHelp(serveOptions)}

Exit codes: 0 after a graceful shutdown (SIGTERM or SIGINT), 2 for a bad option, a bad script
or an address that cannot be bound.
`;

/** Whether a bind address only listens on this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}

class ServeError extends Error {}

async function credentialsOf(options: ResolvedOptions): Promise<ServerCredentials | undefined> {
  const cert = options["tls-cert"] as string | undefined;
  const key = options["tls-key"] as string | undefined;
  if (!cert && !key) return undefined;
  if (!cert || !key) throw new ServeError("--tls-cert and --tls-key go together: give both, or neither for plaintext");
  try {
    const [certChain, privateKey] = await Promise.all([readFile(cert), readFile(key)]);
    return ServerCredentials.createSsl(null, [{ cert_chain: certChain, private_key: privateKey }], false);
  } catch (err) {
    throw new ServeError(`cannot use the TLS files: ${(err as Error).message}`);
  }
}

function logFormatOf(options: ResolvedOptions): LogFormat {
  const f = options["log-format"];
  if (f === "json" || f === "text") return f;
  return process.stderr.isTTY ? "text" : "json";
}

/** Records episodes into the record dir; tracks the writes so shutdown can wait for them. */
function createRecorder(dir: string | undefined, logger: Logger) {
  const pending = new Set<Promise<unknown>>();
  return {
    record(episode: Parameters<typeof writeEpisodeFile>[1]) {
      if (!dir) return;
      const p = writeEpisodeFile(dir, episode).then(
        (path) => logger.info("episode recorded", { session: episode.session, calls: episode.calls.length, path }),
        (err: Error) => logger.error("cannot record episode", { session: episode.session, error: err.message }),
      );
      pending.add(p);
      void p.finally(() => pending.delete(p));
    },
    settled: () => Promise.all(pending),
  };
}

/** Waits until no call is in flight, or until `ms` pass; true when they all finished. */
function drained(stub: Stub, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const deadline = Date.now() + ms;
    const poll = () => {
      if (stub.inFlight() === 0) return resolve(true);
      if (Date.now() >= deadline) return resolve(false);
      setTimeout(poll, 10);
    };
    poll();
  });
}

/** `modelstub serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0. */
export async function serve(argv: string[]): Promise<number> {
  let options: ResolvedOptions;
  try {
    ({ options } = resolveOptions(serveOptions, argv));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub serve: ${err.message}\n\n${usage}`);
      return 2;
    }
    throw err;
  }
  if (options["help"]) {
    process.stdout.write(usage);
    return 0;
  }
  const logger = createLogger({ level: options["quiet"] ? "warn" : (options["log-level"] as LogLevel), format: logFormatOf(options) });
  let grpc: RunningGrpcServer | undefined;
  let http: RunningHttpServer | undefined;
  let stub: Stub;
  let recorder: ReturnType<typeof createRecorder>;
  try {
    const grpcAddress = String(options["grpc"]);
    const { host } = splitAddress(grpcAddress);
    const controlToken = (options["control-token"] as string | undefined) || undefined;
    if (!isLoopbackHost(host) && !controlToken) {
      throw new ServeError(
        `refusing to serve ControlService on ${grpcAddress} without a token: it can replace scripts and read episodes. Set --control-token (or MODELSTUB_CONTROL_TOKEN), or bind a loopback address`,
      );
    }
    const graceMs = parseDuration(String(options["grace"]));
    if (graceMs === undefined) throw new UsageError(`--grace must be a duration like 10s or 500ms, not ${JSON.stringify(options["grace"])}`);
    const maxMessageBytes = intOption(options, "max-message-bytes")!;
    const credentials = await credentialsOf(options);
    let script: CompiledScript;
    try {
      script = options["script"] ? await loadScriptFile(String(options["script"])) : defaultScript();
    } catch (err) {
      if (err instanceof ScriptError) throw new ServeError(err.message);
      throw err;
    }
    recorder = createRecorder(options["record-dir"] as string | undefined, logger);
    stub = createStub({
      script,
      clock: options["clock"] === "virtual" ? createVirtualClock() : createRealClock(),
      maxSessions: intOption(options, "max-sessions"),
      maxEpisodeCalls: intOption(options, "max-episode-calls"),
      onEpisodeClosed: (e) => recorder.record(e),
    });
    try {
      grpc = await startGrpcServer({
        stub,
        address: grpcAddress,
        credentials,
        controlToken,
        logger,
        channelOptions: { "grpc.max_receive_message_length": maxMessageBytes },
      });
    } catch (err) {
      const msg = (err as Error).message;
      const busy = /EADDRINUSE|address already in use|No address added/i.test(msg);
      throw new ServeError(`cannot listen on ${grpcAddress}: ${busy ? "the address is in use (is another modelstub running? pick another with --grpc)" : msg}`);
    }
    if (options["http"]) {
      try {
        http = await startHttpServer({ stub, address: String(options["http"]), log: (r) => logger.http(r), maxBodyBytes: maxMessageBytes });
      } catch (err) {
        const msg = (err as Error).message;
        throw new ServeError(`cannot listen on ${options["http"]}: ${/EADDRINUSE/.test(msg) ? "the address is in use (pick another with --http)" : msg}`);
      }
    }
    process.stdout.write(`modelstub: serving script ${JSON.stringify(script.name)} (${script.entryCount} entries, ${options["clock"]} clock)\n`);
    process.stdout.write(`modelstub: gRPC listening on ${grpc.address}${credentials ? " (TLS)" : ""}\n`);
    if (http) process.stdout.write(`modelstub: HTTP listening on http://${http.address}\n`);

    const signal = await new Promise<string>((resolve) => {
      const stop = (sig: string) => {
        process.off("SIGTERM", stop);
        process.off("SIGINT", stop);
        resolve(sig);
      };
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
    });
    // Drain: orchestrators see NOT_SERVING at once, new calls are refused, calls in flight
    // get the grace period; what is still running then is cut off (and recorded as such).
    logger.info("shutting down", { signal, in_flight: stub.inFlight(), grace_ms: graceMs });
    grpc.health.set("NOT_SERVING");
    stub.drain();
    const finished = await drained(stub, graceMs);
    if (!finished) logger.warn("grace period over: cutting off calls in flight", { in_flight: stub.inFlight() });
    await Promise.all([grpc.close(0), http?.close(0)]);
    await drained(stub, 1000);
    for (const e of stub.episodes()) if (e.calls.length > 0) recorder.record(e);
    await recorder.settled();
    logger.info("stopped", {});
    logger.flush();
    return 0;
  } catch (err) {
    await Promise.all([grpc?.close(0), http?.close(0)]);
    if (err instanceof ServeError || err instanceof UsageError) {
      logger.flush();
      process.stderr.write(`modelstub serve: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
