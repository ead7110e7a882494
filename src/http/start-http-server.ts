import { sameToken } from "../engine/same-token.js";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { checkSessionName, type Stub } from "../engine/create-stub.js";
import { Code } from "../engine/status-code.js";
import { chatCompletions, refused } from "./chat-completions.js";
import { frontError, httpErrorOf, type HttpError } from "./http-error.js";
import { writeHttpLog, type HttpRequestLog } from "./http-log.js";
import { catalogModelList, declaredModels, openAiModel, openAiModelList } from "./model-lists.js";
import { sendError, sendJson } from "./send.js";

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

/** Header names of the public contract, the same as the gRPC metadata keys. */
const sessionHeader = "x-modelstub-session";
const stepHeader = "x-modelstub-step";

/**
 * The request target as a URL, or why it cannot be routed: a target URL cannot parse
 * (`http://[::1`) or a path whose percent-encoding is malformed (`/v1/models/%E0%A4%A`).
 */
function targetOf(raw: string): { url: URL } | { error: string } {
  let url: URL;
  try {
    url = new URL(raw, "http://modelstub.invalid");
  } catch {
    return { error: `the request target ${JSON.stringify(raw.slice(0, 200))} is not a valid URL path` };
  }
  try {
    decodeURIComponent(url.pathname);
  } catch {
    return { error: `the path ${JSON.stringify(url.pathname.slice(0, 200))} has malformed percent-encoding: every % must start an escape (%XX) of UTF-8 bytes` };
  }
  return { url };
}

/** A 401 when the front needs a token and the request does not carry it. */
function unauthorized(req: IncomingMessage, token: string | undefined): HttpError | undefined {
  if (token === undefined) return undefined;
  const auth = headerText(req, "authorization");
  const m = /^Bearer\s+(.*)$/i.exec(auth);
  if (m && sameToken(m[1]!, token)) return undefined;
  const message = auth
    ? "wrong token: this server needs `authorization: Bearer <token>` with its --control-token"
    : "this server is exposed beyond loopback and needs `authorization: Bearer <token>` with its --control-token (the OpenAI SDKs send their apiKey so)";
  return frontError(401, message, "invalid_api_key", [["www-authenticate", "Bearer"]]);
}

function headerText(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
}

/** Reads the body as UTF-8 text; undefined when it passes the limit, or the client went away. */
async function readBody(req: IncomingMessage, limit: number): Promise<string | "too large" | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) return "too large";
      chunks.push(chunk);
    }
  } catch {
    return undefined;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Answers a request refused before routing; resolves with its log fields. */
async function refuseWith(res: ServerResponse, e: HttpError, code: number): Promise<Partial<HttpRequestLog>> {
  sendError(res, e);
  return { status: e.status, ...refused(code, e.body.error.message) };
}

const routesHelp = "modelstub serves POST /v1/chat/completions (also /chat/completions), GET /v1/models, GET /v1/models/{id} and GET /models";

function wrongMethod(res: ServerResponse, allow: string): Partial<HttpRequestLog> {
  sendError(res, frontError(405, `use ${allow} here; ${routesHelp}`, "method_not_allowed", [["allow", allow]]));
  return { status: 405 };
}

/** One request as the router sees it. */
interface Routed {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  session: string;
  step: string;
}

async function route(stub: Stub, { req, res, url, session, step }: Routed, maxBody: number): Promise<Partial<HttpRequestLog>> {
  const path = url.pathname;
  if (path === "/v1/chat/completions" || path === "/chat/completions") {
    if (req.method !== "POST") return wrongMethod(res, "POST");
    const body = await readBody(req, maxBody);
    if (body === undefined) return { status: 499 };
    if (body === "too large") {
      const message = `the request body is larger than ${maxBody} bytes`;
      sendError(res, frontError(413, message, "request_too_large", [["connection", "close"]]));
      return { status: 413, ...refused(Code.RESOURCE_EXHAUSTED, message) };
    }
    return chatCompletions(stub, res, body, { session, step });
  }
  const script = stub.scriptOf(session);
  if (path === "/v1/models" || path === "/models") {
    if (req.method !== "GET") return wrongMethod(res, "GET");
    // OpenRouter's catalog lives at /models (its base URL ends in /api/v1, ours has no prefix).
    sendJson(res, 200, path === "/models" ? catalogModelList(script, url.searchParams.get("output_modalities")) : openAiModelList(script));
    return { status: 200 };
  }
  if (path.startsWith("/v1/models/")) {
    if (req.method !== "GET") return wrongMethod(res, "GET");
    // The whole path decoded once already (targetOf), so this cannot throw.
    const id = decodeURIComponent(path.slice("/v1/models/".length));
    const model = declaredModels(script).find((m) => m.id === id);
    if (!model) {
      sendError(res, frontError(404, `the script declares no model ${JSON.stringify(id)}; GET /v1/models lists the ones it does`, "model_not_found"));
      return { status: 404 };
    }
    sendJson(res, 200, openAiModel(model));
    return { status: 200 };
  }
  sendError(res, frontError(404, `no route ${req.method} ${path}; ${routesHelp}`, "not_found"));
  return { status: 404 };
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
    // A refused session name or step can be any length: the log keeps as much of it as the error message.
    const base: HttpRequestLog = { method: req.method ?? "", path, status: 0, session: session.slice(0, 140), step: step.slice(0, 140), entry: "", outcome: "", declaredMs: 0 };
    const denied = unauthorized(req, options.token);
    const bad = checkSessionName(session);
    const answered: Promise<Partial<HttpRequestLog>> = denied
      ? refuseWith(res, denied, Code.UNAUTHENTICATED)
      : "error" in target
        ? refuseWith(res, frontError(400, target.error, "invalid_path"), Code.INVALID_ARGUMENT)
        : bad
          ? refuseWith(res, httpErrorOf(bad), bad.code)
          : route(stub, { req, res, url: target.url, session, step }, maxBody);
    const handled = answered
      .catch((err: unknown) => {
        sendError(res, frontError(500, `modelstub internal error: ${err instanceof Error ? err.message : String(err)}`, "internal_error"));
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
