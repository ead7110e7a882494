import type { CallStatus } from "../script/compiled-script.js";
import { httpStatusOf, httpStatusTrailer } from "../shared/http-status-trailer.js";
import { Code, codeName } from "../shared/status-code.js";

/** An error answer: status, extra headers, and a body in the dialect's shape (OpenAI's `{"error":{...}}` by default). */
export interface HttpError {
  status: number;
  headers: [string, string][];
  /** The error's message, whatever the body's shape: for the log line. */
  message: string;
  body: object;
}

/** The parts every dialect's error body is made from. */
export interface ErrorParts {
  status: number;
  message: string;
  /** OpenAI's error type (invalid_request_error, server_error, ...). */
  type: string;
  param: string | null;
  code: string | null;
  /** The id naming the request, for shapes whose body carries one (Anthropic's `request_id`); null when refused before it ran. */
  requestId?: string | null;
}

/** How a dialect shapes an error body; OpenAI's `{"error":{message,type,param,code}}` by default. */
export type ErrorShape = (e: ErrorParts) => object;

/** OpenAI's error body (also OpenRouter's and the Responses API's). */
export const openAiErrorShape: ErrorShape = ({ message, type, param, code }) => ({ error: { message, type, param, code } });

interface Mapping {
  status: number;
  type: string;
  code: string;
}

/*
 * The one table from the engine's status codes to HTTP. Chosen with the official SDKs' retry
 * rules in mind (they retry 408, 409, 429 and 5xx): an exhausted script (FAILED_PRECONDITION)
 * is a 400 so that no client retries it forever. README, "Failures over HTTP", prints this table.
 */
const table: Record<number, Mapping> = {
  [Code.CANCELLED]: { status: 499, type: "invalid_request_error", code: "cancelled" },
  [Code.UNKNOWN]: { status: 500, type: "server_error", code: "unknown" },
  [Code.INVALID_ARGUMENT]: { status: 400, type: "invalid_request_error", code: "invalid_argument" },
  [Code.DEADLINE_EXCEEDED]: { status: 408, type: "timeout", code: "timeout" },
  [Code.NOT_FOUND]: { status: 404, type: "invalid_request_error", code: "not_found" },
  [Code.ALREADY_EXISTS]: { status: 409, type: "invalid_request_error", code: "already_exists" },
  [Code.PERMISSION_DENIED]: { status: 403, type: "permission_error", code: "permission_denied" },
  [Code.RESOURCE_EXHAUSTED]: { status: 429, type: "requests", code: "rate_limit_exceeded" },
  [Code.FAILED_PRECONDITION]: { status: 400, type: "invalid_request_error", code: "failed_precondition" },
  [Code.ABORTED]: { status: 409, type: "invalid_request_error", code: "aborted" },
  [Code.OUT_OF_RANGE]: { status: 400, type: "invalid_request_error", code: "out_of_range" },
  [Code.UNIMPLEMENTED]: { status: 501, type: "server_error", code: "unimplemented" },
  [Code.INTERNAL]: { status: 500, type: "server_error", code: "internal_error" },
  [Code.UNAVAILABLE]: { status: 503, type: "server_error", code: "unavailable" },
  [Code.DATA_LOSS]: { status: 500, type: "server_error", code: "data_loss" },
  [Code.UNAUTHENTICATED]: { status: 401, type: "invalid_request_error", code: "invalid_api_key" },
};

/** The HTTP status, error type and code a status code maps to. */
export function mappingOf(code: number): { status: number; type: string; code: string } {
  const m = table[code];
  return m ?? { status: 500, type: "server_error", code: codeName(code).toLowerCase() };
}

const headerValue = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the HTTP front owns: a scripted trailer of the same name is not sent. */
const reserved = new Set(["content-type", "content-length", "transfer-encoding", "connection", "keep-alive", "date"]);

/**
 * Retry hints for a 429: both headers, so every client finds the one it reads. A script that
 * gives one gets the other derived: seconds rounded up from milliseconds, or seconds times 1000.
 */
function retryHeaders(trailers: CallStatus["trailers"]): [string, string][] {
  const ms = trailers.find(([k]) => k === "retry-after-ms")?.[1];
  const s = trailers.find(([k]) => k === "retry-after")?.[1];
  const out: [string, string][] = [];
  if (ms !== undefined) out.push(["retry-after-ms", ms]);
  else if (s !== undefined && /^\d+(\.\d+)?$/.test(s)) out.push(["retry-after-ms", String(Math.round(Number(s) * 1000))]);
  if (s !== undefined) out.push(["retry-after", s]);
  else if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) out.push(["retry-after", String(Math.ceil(Number(ms) / 1000))]);
  return out;
}

/**
 * The HTTP answer for an engine status. Scripted trailers become response headers (so a script
 * can send `x-should-retry: "false"`, which the official SDKs obey); a 429 always carries both
 * retry headers when the script gives either, and a status that retrying cannot lift (the
 * stub's own caps) carries `x-should-retry: false`.
 */
export function httpErrorOf(status: CallStatus, shape: ErrorShape = openAiErrorShape): HttpError {
  const m = { ...mappingOf(status.code) };
  // A recorded upstream status the code cannot name back (a 529, a 502): answered as recorded.
  const exact = httpStatusOf(status.trailers);
  if (exact !== undefined) m.status = exact;
  const retry = status.code === Code.RESOURCE_EXHAUSTED ? retryHeaders(status.trailers) : [];
  const replaced = (k: string) => retry.length > 0 && (k === "retry-after" || k === "retry-after-ms");
  // A limit of the stub itself (session or episode cap): without this, the official SDKs would
  // retry the 429 with their own backoff, to the same answer every time.
  const final: [string, string][] = status.retryable === false && !status.trailers.some(([k]) => k === "x-should-retry") ? [["x-should-retry", "false"]] : [];
  const headers = [...status.trailers.filter(([k]) => !replaced(k)), ...retry, ...final]
    // A value HTTP cannot carry (a newline, say) is left out rather than failing the answer.
    .filter(([k, v]) => !reserved.has(k) && k !== httpStatusTrailer && headerValue.test(v))
    .map(([k, v]): [string, string] => [k, v]);
  return {
    status: m.status,
    headers,
    message: status.message,
    body: shape({ status: m.status, message: status.message, type: m.type, param: null, code: m.code }),
  };
}

/** A 400 for a request modelstub cannot read, naming the field at fault. */
export function badRequestError(bad: { message: string; param: string | null; code: string }, shape: ErrorShape = openAiErrorShape): HttpError {
  return {
    status: 400,
    headers: [],
    message: bad.message,
    body: shape({ status: 400, message: bad.message, type: "invalid_request_error", param: bad.param, code: bad.code }),
  };
}

/** An error of the HTTP front itself (unknown route, wrong method, body too large). */
export function frontError(status: number, message: string, code: string, headers: [string, string][] = [], shape: ErrorShape = openAiErrorShape): HttpError {
  return { status, headers, message, body: shape({ status, message, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code }) };
}
