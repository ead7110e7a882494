import type { CallStatus } from "../script/compiled-script.js";
import { httpStatusOf } from "../shared/http-status-trailer.js";
import { Code } from "../shared/status-code.js";
import { requestIdOf } from "./dialect.js";
import { httpErrorOf, type ErrorShape, type HttpError } from "./http-error.js";

/**
 * Anthropic's error types by HTTP status (docs.anthropic.com, "Errors"). A status Anthropic
 * does not list takes the type of its class: invalid_request_error for 4xx, api_error for 5xx.
 */
const typesByStatus: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  // modelstub's scripted timeout (DEADLINE_EXCEEDED) answers 408; Anthropic's own is a 504.
  408: "timeout_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/** The Anthropic error type of an HTTP status. */
export function anthropicErrorType(status: number): string {
  return typesByStatus[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/**
 * Anthropic's error body, `{"type":"error","error":{"type":...,"message":...},"request_id":...}`,
 * its type chosen by the HTTP status (OpenAI's type and code, which the other dialects send,
 * have no place in it). `request_id` is the `request-id` header's value for a call that ran,
 * and null for a request refused before it ran (the SDK's ErrorResponse allows both).
 */
export const anthropicErrorShape: ErrorShape = ({ status, message, requestId }) => ({
  type: "error",
  error: { type: anthropicErrorType(status), message },
  request_id: requestId ?? null,
});

/**
 * Anthropic's status for "overloaded, come back later". UNAVAILABLE answers it rather than the
 * 503 of the OpenAI dialects: it is what Anthropic sends, the SDKs retry it (they retry every
 * 5xx), and harnesses written for Anthropic (Claude Code among them) treat 529 as the transient
 * overload it is meant to be.
 */
export const overloadedStatus = 529;

/**
 * The HTTP answer for an engine status in Anthropic's shape: the shared table (httpErrorOf) with
 * its headers (scripted trailers, retry-after and retry-after-ms on a 429, x-should-retry), save
 * UNAVAILABLE, which answers 529 overloaded_error.
 */
export function anthropicErrorOf(status: CallStatus, id?: string): HttpError {
  const requestId = id === undefined ? null : requestIdOf(id);
  const e = httpErrorOf(status, (parts) => anthropicErrorShape({ ...parts, requestId }));
  if (status.code !== Code.UNAVAILABLE || httpStatusOf(status.trailers) !== undefined) return e;
  return {
    ...e,
    status: overloadedStatus,
    body: anthropicErrorShape({ status: overloadedStatus, message: status.message, type: "", param: null, code: null, requestId }),
  };
}
