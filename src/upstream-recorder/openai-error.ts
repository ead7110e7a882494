import { mappingOf } from "../http/http-error.js";
import { httpStatusTrailer } from "../shared/http-status-trailer.js";
import { Code } from "../shared/status-code.js";
import { isObj } from "./openai-reply.js";
import type { UpstreamResult } from "./upstream.js";

/**
 * HTTP statuses as gRPC codes, for gRPC clients of the recorder and the replay: those the HTTP
 * front maps back to the same status (src/http/http-error.ts), and a near code where none does
 * (502 and 529 are an overloaded or failing upstream a client may retry, UNAVAILABLE; 504 the
 * gateway's own timeout, DEADLINE_EXCEEDED; 422 a request refused as invalid). An unlisted 4xx
 * is UNKNOWN, an unlisted 5xx INTERNAL. Where the code's own status differs from the upstream's,
 * the recorded error carries the upstream's in `x-modelstub-http-status`, so the HTTP front
 * answers a replay with the very status recorded. docs/record.md lists this table. A 408 is
 * the upstream's own timeout: `timeout: true`, which answers 408 over HTTP.
 */
const codeOfStatus: Record<number, number> = {
  400: Code.INVALID_ARGUMENT,
  401: Code.UNAUTHENTICATED,
  403: Code.PERMISSION_DENIED,
  404: Code.NOT_FOUND,
  409: Code.ABORTED,
  422: Code.INVALID_ARGUMENT,
  429: Code.RESOURCE_EXHAUSTED,
  499: Code.CANCELLED,
  500: Code.INTERNAL,
  501: Code.UNIMPLEMENTED,
  502: Code.UNAVAILABLE,
  503: Code.UNAVAILABLE,
  504: Code.DEADLINE_EXCEEDED,
  529: Code.UNAVAILABLE,
};

/** The gRPC code an upstream HTTP error status is recorded as. */
export const codeOfHttpStatus = (status: number): number => codeOfStatus[status] ?? (status >= 500 ? Code.INTERNAL : Code.UNKNOWN);

/** Response headers kept as the recorded status's trailers: the retry hints clients obey. */
const keptHeaders = ["retry-after", "retry-after-ms", "x-should-retry"];

/**
 * The message of an error body in the shapes OpenAI-compatible servers use: OpenAI's
 * `{"error":{"message"}}`, a plain `{"error":"text"}`, vLLM's top-level `{"message"}`, and
 * FastAPI's `{"detail"}` (a text, or a list of `{loc, msg}` validation problems).
 */
function messageOfBody(body: unknown): string | undefined {
  if (!isObj(body)) return undefined;
  const e = body["error"];
  if (isObj(e) && typeof e["message"] === "string") return e["message"];
  if (typeof e === "string" && e !== "") return e;
  if (typeof body["message"] === "string" && body["message"] !== "") return body["message"];
  const detail = body["detail"];
  if (typeof detail === "string" && detail !== "") return detail;
  if (Array.isArray(detail) && detail.length > 0) {
    return detail
      .map((d) => (isObj(d) && typeof d["msg"] === "string" ? (Array.isArray(d["loc"]) ? `${d["loc"].join(".")}: ${d["msg"]}` : d["msg"]) : JSON.stringify(d)))
      .join("; ");
  }
  return undefined;
}

/** An upstream's error answer as a status: its message from the body, its retry hints as trailers. */
export async function errorOf(res: Response, totalMs: () => number): Promise<UpstreamResult> {
  const text = await res.text().catch(() => "");
  let message = `upstream answered HTTP ${res.status}`;
  try {
    const body: unknown = JSON.parse(text);
    message = messageOfBody(body) ?? message;
  } catch {
    // Kept whole: the recorder scrubs the key out first and only then clips it to a status
    // message's size (record-entry.ts); a clip here could cut through a key and keep its prefix.
    if (text.trim()) message = text.trim();
  }
  if (res.status === 408) return { kind: "timeout", totalMs: totalMs() };
  const trailers = keptHeaders.flatMap((k): [string, string][] => {
    const v = res.headers.get(k);
    return v !== null && /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v) ? [[k, v]] : [];
  });
  const code = codeOfHttpStatus(res.status);
  // Only where the code would answer another status: a recorded 429 or 503 stays as it was.
  if (mappingOf(code).status !== res.status && /^[45]\d\d$/.test(String(res.status))) trailers.push([httpStatusTrailer, String(res.status)]);
  return { kind: "error", code, message, trailers, httpStatus: res.status, totalMs: totalMs() };
}
