import { Code } from "../shared/status-code.js";
import { chatBodyOf } from "./openai-request.js";
import { msSince, type Upstream, type UpstreamCall, type UpstreamOptions, type UpstreamReply, type UpstreamResult } from "./upstream.js";

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

const finishReasons = new Set(["stop", "length", "tool_calls", "content_filter"]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** An error's text with the full URL (credentials and all) replaced by the one shown. */
const scrubUrl = (text: string, url: string, shown: string) => text.split(url).join(shown);

/** Collects a reply from a whole completion or from stream deltas. */
class ReplyBuilder {
  chunks: string[] = [];
  calls: { id: string; name: string; arguments: string }[] = [];
  finish = "";
  usage: UpstreamReply["usage"];
  model = "";

  usageOf(u: unknown): void {
    if (isObj(u) && typeof u["prompt_tokens"] === "number" && typeof u["completion_tokens"] === "number") this.usage = { input: u["prompt_tokens"], output: u["completion_tokens"] };
  }

  /** One choice's message (unary) or delta (stream); returns whether it carried content. */
  add(m: Obj): boolean {
    let content = false;
    if (typeof m["content"] === "string" && m["content"] !== "") {
      this.chunks.push(m["content"]);
      content = true;
    }
    const calls = Array.isArray(m["tool_calls"]) ? m["tool_calls"] : [];
    calls.forEach((c: unknown, i) => {
      if (!isObj(c)) return;
      const index = typeof c["index"] === "number" ? c["index"] : i;
      const fn = isObj(c["function"]) ? c["function"] : {};
      const call = (this.calls[index] ??= { id: "", name: "", arguments: "" });
      if (typeof c["id"] === "string") call.id = c["id"];
      if (typeof fn["name"] === "string") call.name += fn["name"];
      if (typeof fn["arguments"] === "string") call.arguments += fn["arguments"];
      content = true;
    });
    return content;
  }

  build(): UpstreamReply {
    const calls = this.calls.filter((c) => c !== undefined);
    const finish = finishReasons.has(this.finish) ? (this.finish as UpstreamReply["finishReason"]) : calls.length > 0 ? "tool_calls" : "stop";
    return { text: this.chunks.join(""), chunks: this.chunks, toolCalls: calls, finishReason: finish, usage: this.usage, model: this.model };
  }
}

/** The events of a server-sent-events body: each `data:` payload, in order. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true }).replace(/\r\n?/g, "\n");
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
      if (data.length > 0) yield data.join("\n");
    }
  }
}

/** An upstream's error answer as a status: its message from the body, its retry hints as trailers. */
async function errorOf(res: Response, totalMs: () => number): Promise<UpstreamResult> {
  const text = await res.text().catch(() => "");
  let message = `upstream answered HTTP ${res.status}`;
  try {
    const body: unknown = JSON.parse(text);
    const e = isObj(body) && isObj(body["error"]) ? body["error"] : undefined;
    if (e && typeof e["message"] === "string") message = e["message"];
  } catch {
    if (text.trim()) message = text.trim().slice(0, 1024);
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
 * An OpenAI-compatible chat-completions endpoint as the recorder's upstream: `baseUrl` like
 * `http://127.0.0.1:8000/v1`. Streams when the client streams (so the chunks are the upstream's),
 * asks for usage in streams, and turns HTTP errors, timeouts and broken streams into results.
 */
export function createOpenAiUpstream(baseUrl: string, options: UpstreamOptions = {}): Upstream {
  const url = `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
  // What comments and messages name: never a user, password or query the URL may carry.
  const shown = new URL(url);
  shown.username = "";
  shown.password = "";
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
      try {
        const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(chatBodyOf(request, stream, options.model)), signal: both });
        if (!res.ok) return await errorOf(res, totalMs);
        if (!stream) {
          const body: unknown = await res.json();
          firstByteMs = totalMs();
          const b = isObj(body) ? body : {};
          const choice = Array.isArray(b["choices"]) && isObj(b["choices"][0]) ? b["choices"][0] : {};
          reply.add(isObj(choice["message"]) ? choice["message"] : {});
          reply.finish = typeof choice["finish_reason"] === "string" ? choice["finish_reason"] : "";
          reply.usageOf(b["usage"]);
          reply.model = typeof b["model"] === "string" ? b["model"] : "";
          return { kind: "reply", reply: reply.build(), firstByteMs, totalMs: totalMs() };
        }
        for await (const data of sseData(res.body!)) {
          if (data.trim() === "[DONE]") break;
          const chunk: unknown = JSON.parse(data);
          if (!isObj(chunk)) continue;
          if (isObj(chunk["error"])) {
            const message = typeof chunk["error"]["message"] === "string" ? chunk["error"]["message"] : "upstream stream error";
            return { kind: "reply", reply: reply.build(), firstByteMs: Math.max(firstByteMs, 0), totalMs: totalMs(), broke: { afterChunks: sent, message } };
          }
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
        return { kind: "reply", reply: reply.build(), firstByteMs: Math.max(firstByteMs, 0), totalMs: totalMs() };
      } catch (err) {
        if (signal.aborted) return { kind: "aborted", reason: String(signal.reason) === "deadline" ? "deadline" : "cancelled", totalMs: totalMs() };
        if (timeout.aborted) return { kind: "timeout", totalMs: totalMs() };
        const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
        if (sent > 0) return { kind: "reply", reply: reply.build(), firstByteMs, totalMs: totalMs(), broke: { afterChunks: sent, message: `upstream stream broke: ${why}` } };
        return { kind: "error", code: Code.UNAVAILABLE, message: `upstream ${describe} unreachable: ${scrubUrl(why, url, describe)}`, trailers: [], totalMs: totalMs() };
      }
    },
  };
}
