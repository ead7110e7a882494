import { sameToken } from "../engine/same-token.js";
import { quoteClipped } from "../shared/clip-text.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Stub } from "../engine/create-stub.js";
import type { CompiledScript } from "../script/compiled-script.js";
import { Code } from "../shared/status-code.js";
import { heavyRequestBytes, heavyTurn } from "../shared/heavy-turns.js";
import { anthropicCountTokens, anthropicErrorShape, anthropicMessages } from "./anthropic-messages.js";
import { refused, type CallTarget } from "./answer-call.js";
import { chatCompletions } from "./chat-completions.js";
import { embeddings } from "./embeddings.js";
import { answerDialect, type HttpDialect } from "./http-dialect.js";
import { readBody, textOf } from "./read-body.js";
import { frontError, openAiErrorShape, type ErrorShape, type HttpError } from "./http-error.js";
import { geminiCallOf, geminiDialect, geminiErrorShape, geminiModelsBase } from "./gemini.js";
import { responses } from "./responses.js";
import { retryCountOf, type DroppedRequests } from "./dropped-requests.js";
import type { HttpRequestLog } from "./http-log.js";
import { catalogModelList, declaredModels, geminiModel, geminiModelList, openAiModel, openAiModelList } from "./model-lists.js";
import { sendError, sendJson } from "./send.js";

// How startHttpServer (start-http-server.ts) routes a request: the checks before routing (the
// target, the token) and the routes themselves.

/** A model call's route: the dialect's handler, and the shape of the front's own errors there. */
interface ModelRoute {
  handle: (stub: Stub, res: ServerResponse, body: string, target: CallTarget) => Promise<Partial<HttpRequestLog>>;
  shape: ErrorShape;
}

/** A dialect's model call as a route. */
function dialectRoute(d: HttpDialect): ModelRoute {
  return { handle: (stub, res, body, target) => answerDialect(d, stub, res, body, target), shape: d.shape };
}

const chatRoute = dialectRoute(chatCompletions);
const responsesRoute = dialectRoute(responses);
const messagesRoute = dialectRoute(anthropicMessages);
const countTokensRoute: ModelRoute = { handle: anthropicCountTokens, shape: anthropicErrorShape };
const embeddingsRoute: ModelRoute = { handle: embeddings, shape: openAiErrorShape };

/**
 * The model-call paths, under `/v1` and at the host root (OpenRouter's base ends in `/api/v1`,
 * and some harnesses give the host alone). Anthropic's SDK puts `/v1` in its paths itself.
 */
const modelRoutes = new Map<string, ModelRoute>([
  ["/v1/chat/completions", chatRoute],
  ["/chat/completions", chatRoute],
  ["/v1/responses", responsesRoute],
  ["/responses", responsesRoute],
  ["/v1/messages", messagesRoute],
  ["/v1/messages/count_tokens", countTokensRoute],
  ["/v1/embeddings", embeddingsRoute],
  ["/embeddings", embeddingsRoute],
]);

/** OpenRouter's documented base path: a client given `http://<modelstub>/api/v1` as its base URL. */
const openRouterBase = "/api/v1";

/**
 * The path a request is served by: OpenRouter's base `/api/v1` is an alias, each path under it
 * served as the same path under the host root (`/api/v1/chat/completions` as `/chat/completions`,
 * `/api/v1/models` as OpenRouter's catalog at `/models`), and `/api/v1/messages` as
 * `/v1/messages`, Anthropic's (OpenRouter serves its Messages API there).
 */
export function servedPath(path: string): string {
  if (!path.startsWith(`${openRouterBase}/`)) return path;
  const rest = path.slice(openRouterBase.length);
  return rest === "/messages" || rest.startsWith("/messages/") ? `/v1${rest}` : rest;
}

/**
 * The shape of the front's own errors for a request to `path`: Anthropic's on its routes and
 * under them (`/v1/messages/batches`, which is not served, is answered as Anthropic's SDK reads
 * a 404), else OpenAI's.
 */
export function errorShapeOf(requestPath: string): ErrorShape {
  const path = servedPath(requestPath);
  const shape = modelRoutes.get(path)?.shape;
  if (shape) return shape;
  if (path.startsWith("/v1beta/") || geminiCallOf(path)) return geminiErrorShape;
  return path.startsWith("/v1/messages/") ? messagesRoute.shape : openAiErrorShape;
}

const chatTargets = new Map([...modelRoutes.keys()].map((p) => [p, new URL(p, "http://modelstub.invalid")]));

/**
 * The request target as a URL, or why it cannot be routed: a target URL cannot parse
 * (`http://[::1`) or a path whose percent-encoding is malformed (`/v1/models/%E0%A4%A`).
 */
export function targetOf(raw: string): { url: URL } | { error: string } {
  // The chat paths, parsed once: a URL per request was about 2% of one. Shared, so never mutated.
  const known = chatTargets.get(raw);
  if (known) return { url: known };
  let url: URL;
  try {
    url = new URL(raw, "http://modelstub.invalid");
  } catch {
    return { error: `the request target ${quoteClipped(raw)} is not a valid URL path` };
  }
  try {
    decodeURIComponent(url.pathname);
  } catch {
    return { error: `the path ${quoteClipped(url.pathname)} has malformed percent-encoding: every % must start an escape (%XX) of UTF-8 bytes` };
  }
  return { url };
}

/**
 * A 401 when the front needs a token and the request does not carry it, as `authorization:
 * Bearer <token>` (how the OpenAI SDKs and Anthropic's TypeScript SDK send their key), as
 * `x-api-key: <token>` (how Anthropic's API reads it, and clients such as Claude Code send it), or
 * as Gemini's API key: `x-goog-api-key: <token>` (how @google/genai sends it) or `?key=<token>`
 * in the query (`query`, the request's), the other way Google's APIs take one.
 */
export function unauthorized(req: IncomingMessage, token: string | undefined, shape: ErrorShape, query?: URLSearchParams): HttpError | undefined {
  if (token === undefined) return undefined;
  const auth = headerText(req, "authorization");
  const m = /^Bearer\s+(.*)$/i.exec(auth);
  if (m && sameToken(m[1]!, token)) return undefined;
  const apiKey = headerText(req, "x-api-key") || headerText(req, "x-goog-api-key") || (query?.get("key") ?? "");
  if (apiKey && sameToken(apiKey, token)) return undefined;
  const message =
    auth || apiKey
      ? "wrong token: this server needs `authorization: Bearer <token>` (or `x-api-key: <token>`, or Gemini's `x-goog-api-key: <token>`) with its --control-token"
      : "this server is exposed beyond loopback and needs `authorization: Bearer <token>` (or `x-api-key: <token>`, or Gemini's `x-goog-api-key: <token>`) with its --control-token (the SDKs send their apiKey so)";
  return frontError(401, message, "invalid_api_key", [["www-authenticate", "Bearer"]], shape);
}

/** A request header as text: the first when sent more than once, "" when not sent. */
export function headerText(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
}

/** Answers a request refused before routing; resolves with its log fields. */
export async function refuseWith(res: ServerResponse, e: HttpError, code: number): Promise<Partial<HttpRequestLog>> {
  sendError(res, e);
  return { status: e.status, ...refused(code, e.message) };
}

const routesHelp =
  "modelstub serves POST /v1/chat/completions (also /chat/completions), POST /v1/messages (Anthropic) and /v1/messages/count_tokens, POST /v1/responses (also /responses), POST /v1/embeddings (also /embeddings), GET /v1/models, GET /v1/models/{id} (also /models/{id}) and GET /models (also /v1/models?output_modalities=...), and each of them under OpenRouter's base /api/v1 as at the host root; and Gemini's POST /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse, GET /v1beta/models and /v1beta/models/{model}, each under /v1/models too (the lists when asked by Google's SDK)";

function wrongMethod(res: ServerResponse, allow: string, shape: ErrorShape = openAiErrorShape): Partial<HttpRequestLog> {
  sendError(res, frontError(405, `use ${allow} here; ${routesHelp}`, "method_not_allowed", [["allow", allow]], shape));
  return { status: 405 };
}

/** One request as the router sees it. */
export interface Routed {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  session: string;
  step: string;
  /** The server's memory of dropped requests, for SDK retries of them. */
  drops: DroppedRequests;
  /** The server's --openrouter-comments. */
  processingComments: boolean;
}

/** Answers a request that passed the checks by its path: a model call in one of the dialects, or the model lists; resolves with its log fields. */
export async function route(
  stub: Stub,
  { req, res, url, session, step, drops, processingComments }: Routed,
  maxBody: number,
): Promise<Partial<HttpRequestLog>> {
  const path = servedPath(url.pathname);
  // Gemini's model is a segment of its path: a dialect per call, for that model.
  const gemini = geminiCallOf(path);
  const model = gemini ? dialectRoute(geminiDialect(gemini, url.searchParams.get("alt") === "sse")) : modelRoutes.get(path);
  if (model) {
    if (req.method !== "POST") return wrongMethod(res, "POST", model.shape);
    const read = await readBody(req, maxBody);
    if (read === undefined) return { status: 499 };
    if (read === "too large") {
      const message = `the request body is larger than ${maxBody} bytes`;
      sendError(res, frontError(413, message, "request_too_large", [["connection", "close"]], model.shape));
      return { status: 413, ...refused(Code.RESOURCE_EXHAUSTED, message) };
    }
    // Decoding a body of MBs, then scanning and parsing it, are synchronous runs of 5-20 ms each:
    // each waits for its own heavy turn (running the call is a third, answer-call.ts). A client
    // that went away meanwhile: nothing runs, and no episode has it.
    const heavy = read.size >= heavyRequestBytes;
    if (heavy) {
      await heavyTurn();
      if (req.socket.destroyed) return { status: 499 };
    }
    const body = textOf(read.chunks);
    if (heavy) {
      await heavyTurn();
      if (req.socket.destroyed) return { status: 499 };
    }
    return model.handle(stub, res, body, {
      session,
      step,
      drops: { tracker: drops, body: read.digest, retryCount: retryCountOf(headerText(req, "x-stainless-retry-count")) },
      processingComments,
    });
  }
  const script = stub.scriptOf(session);
  const geminiBase = geminiModelsBase(path, headerText(req, "x-goog-api-client") !== "" || headerText(req, "x-goog-api-key") !== "");
  // A method modelstub does not serve (`:countTokens`, `:embedContent`) is no model: a 404 below.
  if (geminiBase && !path.slice(geminiBase.length).includes(":")) return geminiModels(res, req.method, script, path, geminiBase);
  if (path === "/v1/models" || path === "/models") {
    if (req.method !== "GET") return wrongMethod(res, "GET");
    // OpenRouter's catalog: at /models (its base URL ends in /api/v1, ours may have no prefix),
    // and wherever the caller asks for it by OpenRouter's own parameter, so a harness whose base
    // is `.../v1` gets the catalog from `<base>/models?output_modalities=all` too.
    const modalities = url.searchParams.get("output_modalities");
    sendJson(res, 200, path === "/models" || modalities !== null ? catalogModelList(script, modalities) : openAiModelList(script));
    return { status: 200 };
  }
  // One model, under either base (`<base>/models/<id>` with the host root as the base too).
  const prefix = path.startsWith("/v1/models/") ? "/v1/models/" : path.startsWith("/models/") ? "/models/" : undefined;
  if (prefix) {
    if (req.method !== "GET") return wrongMethod(res, "GET");
    // The whole path decoded once already (targetOf), so this cannot throw.
    const id = decodeURIComponent(path.slice(prefix.length));
    const declared = declaredModels(script).find((m) => m.id === id);
    if (!declared) {
      sendError(res, frontError(404, `the script declares no model ${quoteClipped(id)}; GET /v1/models lists the ones it does`, "model_not_found"));
      return { status: 404 };
    }
    sendJson(res, 200, openAiModel(declared));
    return { status: 200 };
  }
  sendError(res, frontError(404, `no route ${req.method} ${url.pathname}; ${routesHelp}`, "not_found", [], errorShapeOf(path)));
  return { status: 404 };
}

/** `GET <base>` and `GET <base>/{model}` (`base` `/v1beta/models` or `/v1/models`) in Gemini's shapes, its errors in Google's. */
function geminiModels(res: ServerResponse, method: string | undefined, script: CompiledScript, path: string, base: string): Partial<HttpRequestLog> {
  if (method !== "GET") return wrongMethod(res, "GET", geminiErrorShape);
  if (path === base) {
    sendJson(res, 200, geminiModelList(script));
    return { status: 200 };
  }
  // The whole path decoded once already (targetOf), so this cannot throw.
  const id = decodeURIComponent(path.slice(base.length + 1));
  const declared = declaredModels(script).find((m) => m.id === id);
  if (!declared) {
    const message = `the script declares no model ${quoteClipped(id)}; GET ${base} lists the ones it does`;
    sendError(res, frontError(404, message, "model_not_found", [], geminiErrorShape));
    return { status: 404 };
  }
  sendJson(res, 200, geminiModel(declared));
  return { status: 200 };
}
