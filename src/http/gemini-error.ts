import type { CallStatus } from "../script/compiled-script.js";
import { httpStatusOf } from "../shared/http-status-trailer.js";
import { Code, codeName } from "../shared/status-code.js";
import { httpErrorOf, type ErrorShape, type HttpError } from "./http-error.js";

/**
 * Google's status names by HTTP status (google.rpc.Code's HTTP mapping), for the errors that have
 * no engine code: a body modelstub cannot read, a missing token, an unknown route, a wrong method,
 * a body too large (Google answers an oversized payload as INVALID_ARGUMENT).
 */
const statusNames: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "UNIMPLEMENTED",
  408: "DEADLINE_EXCEEDED",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** The Google status name of an HTTP status; one Google does not map takes its class's. */
export function geminiStatusName(status: number): string {
  return statusNames[status] ?? (status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION");
}

/** Google's error body, `{"error":{"code":<HTTP status>,"message":...,"status":<name>}}`, as the SDK reads it into its ApiError. */
export const geminiErrorShape: ErrorShape = ({ status, message }) => ({ error: { code: status, message, status: geminiStatusName(status) } });

/**
 * The HTTP answer for an engine status in Google's shape: the shared table (httpErrorOf) with its
 * headers, save DEADLINE_EXCEEDED, which answers 504 as Google's APIs do (not the OpenAI
 * dialects' 408); `status` is the engine code's own name, which is what Google's is (both are
 * google.rpc.Code), so FAILED_PRECONDITION says so rather than the INVALID_ARGUMENT of its 400.
 */
export function geminiErrorOf(status: CallStatus): HttpError {
  const e = httpErrorOf(status, geminiErrorShape);
  const exact = httpStatusOf(status.trailers);
  const http = exact === undefined && status.code === Code.DEADLINE_EXCEEDED ? 504 : e.status;
  const name = exact === undefined ? codeName(status.code) : geminiStatusName(http);
  return { ...e, status: http, body: { error: { code: http, message: status.message, status: name } } };
}
