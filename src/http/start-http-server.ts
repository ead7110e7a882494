import { createServer } from "node:http";
import { checkSessionName } from "../engine/check-session-name.js";
import type { Stub } from "../engine/create-stub.js";
import { Code } from "../shared/status-code.js";
import { frontError, httpErrorOf } from "./http-error.js";
import { DroppedRequests } from "./dropped-requests.js";
import { writeHttpLog, type HttpRequestLog } from "./http-log.js";
import { errorShapeOf, headerText, refuseWith, route, targetOf, unauthorized } from "./route.js";
import { sendError, setAnswerHeader } from "./send.js";
import { episodeHeader, instanceHeader, sessionHeader, stepHeader } from "../shared/header-names.js";
import { StatusError } from "../shared/status-error.js";

/** Options of the OpenAI-compatible HTTP front. */
export interface HttpServerOptions {
  stub: Stub;
  /** HOST:PORT; port 0 picks a free one. Default 127.0.0.1:8080, loopback like the gRPC side. */
  address?: string;
  /** Told about every request once it has ended. Default: one line on stderr. */
  log?: (record: HttpRequestLog) => void;
  /** Largest request body read (default 32 MiB): more answers 413, so one request cannot fill memory. */
  maxBodyBytes?: number;
  /**
   * When set, every request must carry `authorization: Bearer <token>`, else 401. `modelstub
   * serve` sets it to the control token when the front binds a non-loopback address.
   */
  token?: string;
  /** Begin every streamed chat completion with OpenRouter's `: OPENROUTER PROCESSING` comment line. */
  processingComments?: boolean;
  /** A connection that has not sent a whole request head by then is answered 408 and closed. */
  headersTimeoutMs?: number;
  /** A request (head and body) not received in full by then is answered 408 and closed. */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection between two requests is closed after this. */
  keepAliveTimeoutMs?: number;
}

/**
 * The front's timeouts. Node's own defaults let a slow client hold a connection for 60 s per
 * head (checked only every 30 s) and 300 s per request; a stub talks to tests and harnesses on
 * fast links, so it asks far less. No idle timeout once a request is in: a scripted `hang` or a
 * slow stream is idle on purpose, and lasts until the client goes (README, "Safety when exposed").
 */
export const httpTimeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 } as const;

/** A started HTTP front. */
export interface RunningHttpServer {
  /** HOST:PORT as bound. */
  address: string;
  /** The bound port (useful with port 0). */
  port: number;
  /** Stops accepting, lets requests in flight finish for up to `graceMs`, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

/** Splits HOST:PORT (`[::1]:8080` for IPv6). */
export function parseHttpAddress(address: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(address);
  if (!m || Number(m[2]) > 65535) throw new Error(`invalid address ${JSON.stringify(address)}: expected HOST:PORT, like 127.0.0.1:8080`);
  return { host: m[1]!, port: Number(m[2]) };
}

/**
 * Starts the OpenAI-compatible HTTP front over the same stub as the gRPC server: the same
 * sessions, cursors and episodes. Rejects on a busy or bad address.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { stub } = options;
  const address = options.address ?? "127.0.0.1:8080";
  const { host, port: wantedPort } = parseHttpAddress(address);
  const log = options.log ?? writeHttpLog;
  const maxBody = options.maxBodyBytes ?? 32 * 1024 * 1024;
  let inFlight = 0;
  const drops = new DroppedRequests();
  let closing = false;
  // Requests still being handled: close() waits for them so their calls are in the episode
  // before anyone writes it (a cut connection ends the response before the engine records).
  const handlers = new Set<Promise<void>>();
  const headersTimeout = options.headersTimeoutMs ?? httpTimeouts.headersTimeoutMs;
  const requestTimeout = Math.max(headersTimeout, options.requestTimeoutMs ?? httpTimeouts.requestTimeoutMs);
  const serverOptions = {
    headersTimeout,
    requestTimeout,
    // Node checks both timeouts only this often (30 s by default): a slow head would outlive its timeout by as much.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
  };
  const server = createServer(serverOptions, (req, res) => {
    // No Date header: the same script gives the same bytes, headers included.
    res.sendDate = false;
    // A write racing a client that has gone must not become an unhandled 'error' event.
    res.on("error", () => {});
    inFlight++;
    res.once("close", () => {
      inFlight--;
      if (closing && inFlight === 0) server.closeIdleConnections();
    });
    const target = targetOf(req.url ?? "/");
    const path = "url" in target ? target.url.pathname : (req.url ?? "").slice(0, 200);
    const session = headerText(req, sessionHeader) || "default";
    const step = headerText(req, stepHeader);
    // Who answers, and the session's episode as the request finds it (a model call replaces it
    // with the one it joins): every answer, errors included (docs/deploy.md).
    setAnswerHeader(res, instanceHeader, stub.instance);
    const episode = stub.episodeIdOf(session);
    if (episode !== undefined) setAnswerHeader(res, episodeHeader, episode);
    // A refused session name or step can be any length: the log keeps as much of it as the error message.
    const base: HttpRequestLog = {
      method: req.method ?? "",
      path,
      status: 0,
      session: session.slice(0, 140),
      step: step.slice(0, 140),
      entry: "",
      outcome: "",
      declaredMs: 0,
    };
    // Refusals before routing speak the dialect of the path asked for (Anthropic's on /v1/messages).
    const shape = errorShapeOf(path);
    const denied = unauthorized(req, options.token, shape, "url" in target ? target.url.searchParams : undefined);
    const bad = checkSessionName(session);
    const answered: Promise<Partial<HttpRequestLog>> = denied
      ? refuseWith(res, denied, Code.UNAUTHENTICATED)
      : "error" in target
        ? refuseWith(res, frontError(400, target.error, "invalid_path", [], shape), Code.INVALID_ARGUMENT)
        : bad
          ? refuseWith(res, httpErrorOf(bad, shape), bad.code)
          : route(stub, { req, res, url: target.url, session, step, drops, processingComments: options.processingComments === true }, maxBody);
    const handled = answered
      .catch((err: unknown) => {
        sendError(res, frontError(500, StatusError.from(err).message, "internal_error", [], shape));
        return { status: 500 };
      })
      .then((fields) => log({ ...base, ...fields }))
      .catch(() => {})
      .finally(() => handlers.delete(handled));
    handlers.add(handled);
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? httpTimeouts.keepAliveTimeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(wantedPort, host.replace(/^\[(.*)\]$/, "$1"), () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === "object" && bound ? bound.port : wantedPort;
  return {
    address: `${host}:${port}`,
    port,
    close(graceMs = 5000) {
      closing = true;
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(timer);
          void Promise.all(handlers).then(() => resolve());
        });
        server.closeIdleConnections();
      });
    },
  };
}
