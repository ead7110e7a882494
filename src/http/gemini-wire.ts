import { FinishReason, type GenerateResponse, type GenerateStreamResponse, type ToolCall, type Usage } from "../../gen/modelstub/v1/model_pb.js";
import { inputOf } from "./anthropic-wire.js";
import { jsonPieces } from "./json-pieces.js";

// Gemini generateContent wire shapes: the unary GenerateContentResponse, and the stream's
// server-sent events, each of which is a GenerateContentResponse too.

/**
 * Gemini's finish reasons. A reply that calls functions finishes with STOP, as Gemini's does (it
 * has no reason of its own for them); a refusal is SAFETY.
 */
const finishReasons: Record<number, string> = {
  [FinishReason.STOP]: "STOP",
  [FinishReason.LENGTH]: "MAX_TOKENS",
  [FinishReason.TOOL_CALLS]: "STOP",
  [FinishReason.CONTENT_FILTER]: "SAFETY",
};

function finishReasonOf(reason: FinishReason): string {
  return finishReasons[reason] ?? "STOP";
}

/** `usageMetadata`: the engine's counts (the script's, else the token rule's). */
function usageOf(u: Usage | undefined): object {
  const prompt = u?.inputTokens ?? 0;
  const candidates = u?.outputTokens ?? 0;
  return { promptTokenCount: prompt, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates };
}

/**
 * A functionCall part. `id` is the engine's tool call id, which the SDK keeps and a client sends
 * back in its functionCall and functionResponse parts, so a result points to its call as in
 * every dialect; `args` is the arguments text parsed (Anthropic's `input` rule).
 */
function functionCallPart(id: string, name: string, args: string): object {
  return { functionCall: { id, name, args: inputOf(args) } };
}

/** A whole response around one candidate's parts. `responseId` is the engine's response id, `modelVersion` the reply's model. */
function responseOf(engineId: string, model: string, parts: object[], finish: { reason: FinishReason; usage: Usage | undefined } | undefined): object {
  const candidate: Record<string, unknown> = { content: { parts, role: "model" } };
  if (finish) candidate["finishReason"] = finishReasonOf(finish.reason);
  candidate["index"] = 0;
  const body: Record<string, unknown> = { candidates: [candidate] };
  if (finish) body["usageMetadata"] = usageOf(finish.usage);
  body["modelVersion"] = model;
  body["responseId"] = engineId;
  return body;
}

/** An empty reply is one empty text part: the SDK's `text` is then "", not undefined. */
const emptyText = { text: "" };

/** A whole GenerateContentResponse for a unary call: the text part, then a functionCall part per tool call. */
export function generateContentBody(response: GenerateResponse): object {
  const m = response.message;
  const parts: object[] = [];
  if (m && m.content !== "") parts.push({ text: m.content });
  for (const c of m?.toolCalls ?? []) parts.push(functionCallPart(c.id, c.name, c.arguments));
  if (parts.length === 0) parts.push(emptyText);
  return responseOf(response.id, response.model, parts, { reason: response.finishReason, usage: response.usage });
}

/** One SSE event: Gemini's `alt=sse` stream has unnamed events, `data: <json>`. */
export function geminiEvent(body: object): Iterable<string> {
  return jsonPieces("data: ", body, "\r\n\r\n");
}

/**
 * Turns engine stream frames into Gemini's SSE events. A text frame is one event whose part is
 * that chunk, so the chunking is exactly the script's. Gemini sends a function call whole, never
 * its arguments in pieces: a tool call's fragments are gathered, and the call is sent when the
 * next one starts or with the final frame. The final event carries the last call (or an empty
 * text part), `finishReason` and `usageMetadata`, which the engine counts only then.
 */
export class GeminiStreamWriter {
  /** The tool call being gathered, by the engine's index. */
  private pending: { index: number; call: Pick<ToolCall, "id" | "name" | "arguments"> } | undefined;

  private take(): object[] {
    const p = this.pending;
    this.pending = undefined;
    return p ? [functionCallPart(p.call.id, p.call.name, p.call.arguments)] : [];
  }

  /** The SSE events of one engine frame (none while a call's arguments are gathered). */
  *frame(f: GenerateStreamResponse): Generator<string> {
    switch (f.frame.case) {
      case "textDelta":
        // An empty chunk says nothing; the engine sends all text before any tool call.
        if (f.frame.value === "") return;
        yield* geminiEvent(responseOf(f.id, f.model, [{ text: f.frame.value }], undefined));
        return;
      case "toolCallDelta": {
        const d = f.frame.value;
        if (this.pending && this.pending.index !== d.index) yield* geminiEvent(responseOf(f.id, f.model, this.take(), undefined));
        if (!this.pending) this.pending = { index: d.index, call: { id: d.id, name: d.name, arguments: "" } };
        this.pending.call.arguments += d.arguments;
        return;
      }
      case "final": {
        const parts = this.take();
        yield* geminiEvent(
          responseOf(f.id, f.model, parts.length > 0 ? parts : [emptyText], { reason: f.frame.value.finishReason, usage: f.frame.value.usage }),
        );
        return;
      }
      case undefined:
        return;
    }
  }
}
