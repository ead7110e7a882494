import { FinishReason, type GenerateResponse, type Usage } from "../../gen/modelstub/v1/model_pb.js";
import type { TextValue } from "./json-pieces.js";
import type { ResponseEcho } from "./parse-responses-request.js";

// The wire shapes of OpenAI's Responses API (the openai SDK's `Response` and its output items).
// Every id derives from the engine's response id, which derives from session and sequence, so
// the same script gives the same bytes run after run.

/** The wire `id` of a response. */
export function responseId(engineId: string): string {
  return `resp_${engineId}`;
}

/** The id of a response's message item: one per response, so the response's own id suffices. */
export function messageItemId(engineId: string): string {
  return `msg_${engineId}`;
}

/** The id of a response's function_call item (its `call_id` is the engine's tool call id). */
export function functionCallItemId(engineId: string, index: number): string {
  return `fc_${engineId}_${index}`;
}

/** A tool call as the response carries it (a stream keeps its arguments in the parts they came in). */
export interface CallParts {
  id: string;
  name: string;
  arguments: TextValue;
}

/** An output item's status: "incomplete" for the item a reply was cut off in (see incompleteReason). */
export type ItemStatus = "in_progress" | "completed" | "incomplete";

/**
 * Why a finished reply makes an incomplete response, as OpenAI says it: cut at the token limit
 * (finish reason length) or stopped by the content filter; null for a complete one.
 */
export function incompleteReason(finishReason: FinishReason): "max_output_tokens" | "content_filter" | null {
  if (finishReason === FinishReason.LENGTH) return "max_output_tokens";
  if (finishReason === FinishReason.CONTENT_FILTER) return "content_filter";
  return null;
}

/** The status of a finished reply's last output item: the one it was cut off in, if it was. */
export function lastItemStatus(finishReason: FinishReason): ItemStatus {
  return incompleteReason(finishReason) ? "incomplete" : "completed";
}

/** An assistant message item with one output_text part (none while it is in progress). */
export function messageItem(engineId: string, text: TextValue, status: ItemStatus): object {
  return { id: messageItemId(engineId), type: "message", status, role: "assistant", content: status === "in_progress" ? [] : [textPart(text)] };
}

/** The output_text part of a message item. */
export function textPart(text: TextValue): object {
  return { type: "output_text", text, annotations: [] };
}

/** A function_call item. */
export function functionCallItem(engineId: string, index: number, call: CallParts, status: ItemStatus): object {
  return { id: functionCallItemId(engineId, index), type: "function_call", status, call_id: call.id, name: call.name, arguments: call.arguments };
}

/**
 * Whether a reply has a message item: when it says something, or when it says nothing and
 * calls nothing (so every response has an output item, and `output_text` is "").
 */
export function hasMessage(text: TextValue, calls: number): boolean {
  return text.length > 0 || calls === 0;
}

function usageOf(u: Usage | undefined): object {
  return {
    input_tokens: u?.inputTokens ?? 0,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: u?.outputTokens ?? 0,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u?.totalTokens ?? 0,
  };
}

/** How a response stands: in progress (a stream's first events) or finished. */
export type ResponseState = { status: "in_progress" } | { status: "finished"; finishReason: FinishReason; usage: Usage | undefined; output: object[] };

/**
 * A whole `response` object. A finished one is "completed", or "incomplete" with the reason
 * incompleteReason gives (max_output_tokens, content_filter). `output_text` is not sent: the
 * SDK derives it from `output`, as it does for OpenAI's own answers.
 */
export function responseObject(engineId: string, model: string, created: number, echo: ResponseEcho, state: ResponseState): object {
  const reason = state.status === "finished" ? incompleteReason(state.finishReason) : null;
  const body: Record<string, unknown> = {
    id: responseId(engineId),
    object: "response",
    created_at: created,
    status: state.status === "in_progress" ? "in_progress" : reason ? "incomplete" : "completed",
    error: null,
    incomplete_details: reason ? { reason } : null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model,
    output: state.status === "finished" ? state.output : [],
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: echo.truncation,
    metadata: echo.metadata,
  };
  // Usage is known once the reply is; the SDK's type has no null for it, so it is left out before.
  if (state.status === "finished") body["usage"] = usageOf(state.usage);
  return body;
}

/**
 * The output items of a finished reply: its message item (see hasMessage), then one
 * function_call item per tool call; the last is "incomplete" when the reply was cut off.
 */
export function outputItems(engineId: string, text: TextValue, calls: readonly CallParts[], finishReason: FinishReason): object[] {
  const last = lastItemStatus(finishReason);
  const message = hasMessage(text, calls.length);
  const items = message ? [messageItem(engineId, text, calls.length === 0 ? last : "completed")] : [];
  calls.forEach((c, i) => {
    items.push(functionCallItem(engineId, i, c, i === calls.length - 1 ? last : "completed"));
  });
  return items;
}

/** The whole body of a unary answer. */
export function responseBody(response: GenerateResponse, created: number, echo: ResponseEcho): object {
  const m = response.message;
  const output = outputItems(response.id, m?.content ?? "", m?.toolCalls ?? [], response.finishReason);
  return responseObject(response.id, response.model, created, echo, { status: "finished", finishReason: response.finishReason, usage: response.usage, output });
}
