import { Code } from "../shared/status-code.js";
import { chatBodyOf } from "./openai-request.js";
import { errorOf } from "./openai-error.js";
import { isObj, MalformedJson, parseJson, ReplyBuilder, sseData } from "./openai-reply.js";
import {
  idleLimit,
  msSince,
  stalledMessage,
  type Upstream,
  type UpstreamBreak,
  type UpstreamCall,
  type UpstreamOptions,
  type UpstreamResult,
} from "./upstream.js";

/** An error's text with the full URL (its query and all) replaced by the one shown. */
const scrubUrl = (text: string, url: string, shown: string) => text.split(url).join(shown);

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
      const stream = method === "stream";
      const limit = idleLimit(timeoutMs);
      const both = AbortSignal.any([signal, limit.signal]);
      const headers: Record<string, string> = { "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json" };
      if (options.apiKey) headers["authorization"] = `Bearer ${options.apiKey}`;
      const reply = new ReplyBuilder();
      let firstByteMs = -1;
      let lastChunkMs = 0;
      let sent = 0;
      const broke = (b: Omit<UpstreamBreak, "afterChunks">, atMs = totalMs()): UpstreamResult => ({
        kind: "reply",
        reply: reply.build(),
        firstByteMs: Math.max(firstByteMs, 0),
        totalMs: atMs,
        broke: { afterChunks: sent, ...b },
      });
      const unavailable = (message: string): UpstreamResult => ({ kind: "error", code: Code.UNAVAILABLE, message, trailers: [], totalMs: totalMs() });
      // An answer that went wrong part-way: a break after the chunks so far, or before any, a status.
      const failed = (message: string): UpstreamResult => (sent > 0 ? broke({ message }) : unavailable(message));
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
        // Headers in, and every read after: the upstream is alive, and the limit starts again.
        limit.touch();
        for await (const data of sseData(res.body!, limit.touch)) {
          if (data.trim() === "[DONE]") {
            done = true;
            break;
          }
          const chunk = parseJson(data);
          if (!isObj(chunk)) continue;
          if (isObj(chunk["error"]))
            return broke({ message: typeof chunk["error"]["message"] === "string" ? chunk["error"]["message"] : "upstream stream error" });
          if (typeof chunk["model"] === "string") reply.model = chunk["model"];
          reply.usageOf(chunk["usage"]);
          const choice = Array.isArray(chunk["choices"]) && isObj(chunk["choices"][0]) ? chunk["choices"][0] : undefined;
          if (!choice) continue;
          if (reply.add(isObj(choice["delta"]) ? choice["delta"] : {})) {
            lastChunkMs = totalMs();
            if (firstByteMs < 0) firstByteMs = lastChunkMs;
            sent++;
          }
          if (typeof choice["finish_reason"] === "string") reply.finish = choice["finish_reason"];
        }
        // A finish reason says the answer is whole even if [DONE] got lost; with neither, the
        // stream was cut short and must not replay as a finished answer.
        if (!done && reply.finish === "") {
          return failed("upstream stream ended without [DONE]");
        }
        return { kind: "reply", reply: reply.build(), firstByteMs: Math.max(firstByteMs, 0), totalMs: totalMs() };
      } catch (err) {
        // Cut off by the client part-way (its deadline, its cancel, its closed connection) while
        // the upstream stalled or was still sending: a hang after the chunks so far, which the
        // same deadline ends on replay, as grpc-upstream.ts records it. Its time is the last
        // chunk's: the wait after it was the client's, not the upstream's.
        if (signal.aborted && sent > 0) return broke({ then: "hang", message: "" }, lastChunkMs);
        if (signal.aborted) return { kind: "aborted", reason: String(signal.reason) === "deadline" ? "deadline" : "cancelled", totalMs: totalMs() };
        if (limit.signal.aborted) {
          // A stream silent past --upstream-timeout after some chunks: those chunks, then
          // DEADLINE_EXCEEDED at once, as a gRPC upstream's deadline part-way is recorded. Not a
          // hang (a replay would stall until the client's deadline, or forever, where the client
          // got a status while recording), and not `timeout: true`, which holds no chunks. The
          // time is the last chunk's: the replay sends the status without the silence.
          if (sent > 0) return broke({ then: "error", code: Code.DEADLINE_EXCEEDED, message: stalledMessage(timeoutMs) }, lastChunkMs);
          return { kind: "timeout", totalMs: totalMs() };
        }
        // Malformed JSON from a reachable upstream keeps UNAVAILABLE, the code of a 502 Bad
        // Gateway (an invalid answer from upstream), but says what happened.
        if (err instanceof MalformedJson) return failed(err.message);
        const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
        if (sent > 0) return broke({ message: `upstream stream broke: ${why}`, then: socketReset(err) ? "drop" : "error" });
        return unavailable(`upstream ${describe} unreachable: ${scrubUrl(why, url, describe)}`);
      } finally {
        limit.stop();
      }
    },
  };
}
