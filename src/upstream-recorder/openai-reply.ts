import type { UpstreamReply } from "./upstream.js";
import { errorText } from "../shared/status-error.js";

const finishReasons = new Set(["stop", "length", "tool_calls", "content_filter"]);

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A 200 answer whose JSON does not parse: the upstream was reached, so it is not "unreachable". */
export class MalformedJson extends Error {}

/** `text` parsed as JSON, or a MalformedJson saying why not. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new MalformedJson(`upstream answered malformed JSON: ${errorText(err)}`);
  }
}

/** Collects a reply from a whole completion or from stream deltas. */
export class ReplyBuilder {
  chunks: string[] = [];
  calls: { id: string; name: string; arguments: string }[] = [];
  finish = "";
  usage: UpstreamReply["usage"];
  model = "";

  usageOf(u: unknown): void {
    if (isObj(u) && typeof u["prompt_tokens"] === "number" && typeof u["completion_tokens"] === "number")
      this.usage = { input: u["prompt_tokens"], output: u["completion_tokens"] };
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

  /** A whole (non-streamed) chat completion: its first choice's message, finish reason, usage and model. */
  addCompletion(body: unknown): void {
    const b = isObj(body) ? body : {};
    const choice = Array.isArray(b["choices"]) && isObj(b["choices"][0]) ? b["choices"][0] : {};
    this.add(isObj(choice["message"]) ? choice["message"] : {});
    this.finish = typeof choice["finish_reason"] === "string" ? choice["finish_reason"] : "";
    this.usageOf(b["usage"]);
    this.model = typeof b["model"] === "string" ? b["model"] : "";
  }

  build(): UpstreamReply {
    const calls = this.calls.filter((c) => c !== undefined);
    const finish = finishReasons.has(this.finish) ? (this.finish as UpstreamReply["finishReason"]) : calls.length > 0 ? "tool_calls" : "stop";
    return { text: this.chunks.join(""), chunks: this.chunks, toolCalls: calls, finishReason: finish, usage: this.usage, model: this.model };
  }
}

/**
 * The events of a server-sent-events body: each `data:` payload, in order. An event not closed
 * by a blank line before the body ends is dropped, as the SSE spec says; the caller notices the
 * stream ended without `[DONE]`. `onRead` is told of every read, keep-alive comments included:
 * the upstream is alive while bytes come.
 */
export async function* sseData(body: ReadableStream<Uint8Array>, onRead: () => void = () => {}): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    onRead();
    buffer += decoder.decode(bytes, { stream: true }).replace(/\r\n?/g, "\n");
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""));
      if (data.length > 0) yield data.join("\n");
    }
  }
}
