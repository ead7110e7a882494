import { FinishReason, type GenerateResponse, type GenerateStreamResponse, type Usage } from "../../gen/modelstub/v1/model_pb.js";
import { jsonPieces } from "./json-pieces.js";

/**
 * The epoch second every `created` counts from: 2023-11-14T22:13:20Z. A call's `created` is this
 * plus its declared start on the session's timeline in whole seconds, so it never reads the wall
 * clock and is the same run after run.
 */
export const createdEpoch = 1_700_000_000;

/** Constant on purpose: a fingerprint that changed per run would break byte-identical bodies. */
export const systemFingerprint = "fp_modelstub";

/** OpenRouter's `provider` field, in every completion and chunk (OpenAI's SDKs ignore it). */
export const providerName = "modelstub";

/** The wire `created` of a call that started `startMs` into its session's timeline. */
export function createdOf(startMs: number): number {
  return createdEpoch + Math.floor(startMs / 1000);
}

/** The wire `id` of a completion: the engine's response id, which derives from session and sequence. */
export function completionId(engineId: string): string {
  return `chatcmpl-${engineId}`;
}

const finishNames: Record<number, string> = {
  [FinishReason.STOP]: "stop",
  [FinishReason.LENGTH]: "length",
  [FinishReason.TOOL_CALLS]: "tool_calls",
  [FinishReason.CONTENT_FILTER]: "content_filter",
};

function finishName(reason: FinishReason): string {
  return finishNames[reason] ?? "stop";
}

function usageOf(u: Usage | undefined) {
  return { prompt_tokens: u?.inputTokens ?? 0, completion_tokens: u?.outputTokens ?? 0, total_tokens: u?.totalTokens ?? 0 };
}

/** A whole `chat.completion` object for a unary call. */
export function completionBody(response: GenerateResponse, created: number): object {
  const m = response.message;
  const toolCalls = m?.toolCalls ?? [];
  const content = m?.content ?? "";
  const message: Record<string, unknown> = {
    role: "assistant",
    // OpenAI sends null content on a turn that only calls tools.
    content: content === "" && toolCalls.length > 0 ? null : content,
    refusal: null,
  };
  if (toolCalls.length > 0) {
    message["tool_calls"] = toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  }
  return {
    id: completionId(response.id),
    object: "chat.completion",
    created,
    model: response.model,
    provider: providerName,
    system_fingerprint: systemFingerprint,
    // OpenRouter adds the upstream's own finish reason; ours is the same word.
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishName(response.finishReason), native_finish_reason: finishName(response.finishReason) }],
    usage: usageOf(response.usage),
  };
}

/**
 * Turns engine stream frames into `chat.completion.chunk` SSE events, one engine frame to one
 * chunk (plus the role chunk before the first and the usage chunk after the last), so the
 * chunking is exactly the script's, as over gRPC.
 */
export class ChunkWriter {
  private started = false;

  constructor(
    private readonly created: number,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(id: string, model: string, delta: object, finish: string | null): Iterable<string> {
    const body: Record<string, unknown> = {
      id: completionId(id),
      object: "chat.completion.chunk",
      created: this.created,
      model,
      provider: providerName,
      system_fingerprint: systemFingerprint,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, native_finish_reason: finish }],
    };
    if (this.includeUsage) body["usage"] = null;
    return event(body);
  }

  /** The SSE events of one engine frame, made as the writer pulls them: the role chunk first, then its own chunk(s). */
  *frame(f: GenerateStreamResponse): Generator<string> {
    if (!this.started) {
      this.started = true;
      // As OpenAI: "" before text, null on a turn that only calls tools (its first frame is a
      // tool call: the text's frames come first), so a reassembled stream says what unary says.
      yield* this.chunk(f.id, f.model, { role: "assistant", content: f.frame.case === "toolCallDelta" ? null : "" }, null);
    }
    switch (f.frame.case) {
      case "textDelta":
        yield* this.chunk(f.id, f.model, { content: f.frame.value }, null);
        return;
      case "toolCallDelta": {
        const d = f.frame.value;
        // The first delta of a call names it; later ones carry only the index and a fragment.
        const call =
          d.id !== "" || d.name !== ""
            ? { index: d.index, id: d.id, type: "function", function: { name: d.name, arguments: d.arguments } }
            : { index: d.index, function: { arguments: d.arguments } };
        yield* this.chunk(f.id, f.model, { tool_calls: [call] }, null);
        return;
      }
      case "final": {
        yield* this.chunk(f.id, f.model, {}, finishName(f.frame.value.finishReason));
        if (this.includeUsage) {
          yield* event({
            id: completionId(f.id),
            object: "chat.completion.chunk",
            created: this.created,
            model: f.model,
            provider: providerName,
            system_fingerprint: systemFingerprint,
            choices: [],
            usage: usageOf(f.frame.value.usage),
          });
        }
        return;
      }
      case undefined:
        return;
    }
  }
}

/** One SSE event carrying JSON, in the pieces it is written in (jsonPieces). */
export function event(body: object): Iterable<string> {
  return jsonPieces("data: ", body, "\n\n");
}

/** The last event of a stream that ended well. */
export const doneEvent = "data: [DONE]\n\n";
