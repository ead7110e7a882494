import { Code } from "../shared/status-code.js";
import { chatBodyOf } from "./openai-request.js";
import { isObj, MalformedJson, parseJson, ReplyBuilder, sseData } from "./openai-reply.js";
import { msSince, type Upstream, type UpstreamCall, type UpstreamOptions, type UpstreamResult } from "./upstream.js";

/**
 * HTTP statuses as the gRPC codes the HTTP front maps back to them (src/http/http-error.ts), so
 * a recorded 429 replays as a 429. 408 and 504 are timeouts, recorded as `timeout: true`.
 */
const codeOfStatus: Record<number, number> = {
  400: Code.INVALID_ARGUMENT,
  401: Code.UNAUTHENTICATED,
  403: Code.PERMISSION_DENIED,
  404: Code.NOT_FOUND,
  409: Code.ABORTED,
  429: Code.RESOURCE_EXHAUSTED,
  499: Code.CANCELLED,
  500: Code.INTERNAL,
  501: Code.UNIMPLEMENTED,
  502: Code.UNAVAILABLE,
  503: Code.UNAVAILABLE,
};

/** Response headers kept as the recorded status's trailers: the retry hints clients obey. */
const keptHeaders = ["retry-after", "retry-after-ms", "x-should-retry"];

/** An error's text with the full URL (its query and all) replaced by the one shown. */
const scrubUrl = (text: string, url: string, shown: string) => text.split(url).join(shown);

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
async function errorOf(res: Response, totalMs: () => number): Promise<UpstreamResult> {
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
  if (res.status === 408 || res.status === 504) return { kind: "timeout", totalMs: totalMs() };
  const trailers = keptHeaders.flatMap((k): [string, string][] => {
    const v = res.headers.get(k);
    return v !== null && /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v) ? [[k, v]] : [];
  });
  const code = codeOfStatus[res.status] ?? (res.status >= 500 ? Code.INTERNAL : Code.UNKNOWN);
  return { kind: "error", code, message, trailers, httpStatus: res.status, totalMs: totalMs() };
}

/**
 * Whether fetch failed because the connection closed or was reset under the answer (undici's
 * "other side closed", UND_ERR_SOCKET, or ECONNRESET/EPIPE): a dropped link, recorded as
 * `then: drop`, which a replay sends as a reset too. Told from a clean end (no [DONE], recorded
 * as a broken stream) and a body timeout by undici's code; what cannot be told is why the
 * upstream closed (a crash, a proxy's idle cut, a deliberate drop).
 */
function socketReset(err: unknown): boolean {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as { code?: unknown } | null)?.code;
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "EPIPE";
}

/**
 * The chat-completions endpoint under `baseUrl`: the path appended, the query kept (Azure's
 * `?api-version=`). A user or password in it is refused: fetch will not send them, so every
 * call would fail; the key goes by --upstream-key-env instead.
 */
function endpointOf(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.username !== "" || url.password !== "") {
    throw new Error("the upstream URL must not hold a user or password (fetch will not send them); pass the key with --upstream-key-env NAME");
  }
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  url.hash = "";
  return url;
}

/**
 * An OpenAI-compatible chat-completions endpoint as the recorder's upstream: `baseUrl` like
 * `http://127.0.0.1:8000/v1`. Streams when the client streams (so the chunks are the upstream's),
 * asks for usage in streams, and turns HTTP errors, timeouts and broken streams into results.
 */
export function createOpenAiUpstream(baseUrl: string, options: UpstreamOptions = {}): Upstream {
  const endpoint = endpointOf(baseUrl);
  const url = endpoint.toString();
  // What comments and messages name: never the query, which may carry a key.
  const shown = new URL(url);
  shown.search = "";
  const describe = shown.toString();
  const timeoutMs = options.timeoutMs ?? 60_000;
  return {
    describe,
    close() {},
    async call({ method, request, signal }: UpstreamCall): Promise<UpstreamResult> {
      const t0 = performance.now();
      const totalMs = () => msSince(t0);
      const timeout = AbortSignal.timeout(timeoutMs);
      const both = AbortSignal.any([signal, timeout]);
      const stream = method === "stream";
      const headers: Record<string, string> = { "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json" };
      if (options.apiKey) headers["authorization"] = `Bearer ${options.apiKey}`;
      const reply = new ReplyBuilder();
      let firstByteMs = -1;
      let sent = 0;
      const broke = (message: string, then: "error" | "drop" = "error"): UpstreamResult => ({ kind: "reply", reply: reply.build(), firstByteMs: Math.max(firstByteMs, 0), totalMs: totalMs(), broke: { afterChunks: sent, message, then } });
      try {
        const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(chatBodyOf(request, stream, options.model)), signal: both });
        if (!res.ok) return await errorOf(res, totalMs);
        // A server that ignores `stream: true` answers a whole JSON completion: recorded as a unary
        // reply is (one chunk, so even with --keep-chunks the client's stream is cut by the words
        // rule). Any other content type is read as SSE, as servers that mislabel streams need.
        if (!stream || /\bjson\b/i.test(res.headers.get("content-type") ?? "")) {
          reply.addCompletion(parseJson(await res.text()));
          firstByteMs = totalMs();
          return { kind: "reply", reply: reply.build(), firstByteMs, totalMs: totalMs() };
        }
        let done = false;
        for await (const data of sseData(res.body!)) {
          if (data.trim() === "[DONE]") {
            done = true;
            break;
          }
          const chunk = parseJson(data);
          if (!isObj(chunk)) continue;
          if (isObj(chunk["error"])) return broke(typeof chunk["error"]["message"] === "string" ? chunk["error"]["message"] : "upstream stream error");
          if (typeof chunk["model"] === "string") reply.model = chunk["model"];
          reply.usageOf(chunk["usage"]);
          const choice = Array.isArray(chunk["choices"]) && isObj(chunk["choices"][0]) ? chunk["choices"][0] : undefined;
          if (!choice) continue;
          if (reply.add(isObj(choice["delta"]) ? choice["delta"] : {})) {
            if (firstByteMs < 0) firstByteMs = totalMs();
            sent++;
          }
          if (typeof choice["finish_reason"] === "string") reply.finish = choice["finish_reason"];
        }
        // A finish reason says the answer is whole even if [DONE] got lost; with neither, the
        // stream was cut short and must not replay as a finished answer.
        if (!done && reply.finish === "") {
          const why = "upstream stream ended without [DONE]";
          return sent > 0 ? broke(why) : { kind: "error", code: Code.UNAVAILABLE, message: why, trailers: [], totalMs: totalMs() };
        }
        return { kind: "reply", reply: reply.build(), firstByteMs: Math.max(firstByteMs, 0), totalMs: totalMs() };
      } catch (err) {
        if (signal.aborted) return { kind: "aborted", reason: String(signal.reason) === "deadline" ? "deadline" : "cancelled", totalMs: totalMs() };
        if (timeout.aborted) return { kind: "timeout", totalMs: totalMs() };
        // Malformed JSON from a reachable upstream keeps UNAVAILABLE, the code of a 502 Bad
        // Gateway (an invalid answer from upstream), but says what happened.
        if (err instanceof MalformedJson) return sent > 0 ? broke(err.message) : { kind: "error", code: Code.UNAVAILABLE, message: err.message, trailers: [], totalMs: totalMs() };
        const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
        if (sent > 0) return broke(`upstream stream broke: ${why}`, socketReset(err) ? "drop" : "error");
        return { kind: "error", code: Code.UNAVAILABLE, message: `upstream ${describe} unreachable: ${scrubUrl(why, url, describe)}`, trailers: [], totalMs: totalMs() };
      }
    },
  };
}
