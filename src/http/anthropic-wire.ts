import { FinishReason, type GenerateResponse, type GenerateStreamResponse, type Usage } from "../../gen/modelstub/v1/model_pb.js";
import { jsonPieces } from "./json-pieces.js";

// Anthropic Messages wire shapes: the unary `message` object and the SSE events of a stream.

/** The wire `id` of a message: the engine's response id, which derives from session and sequence. */
export function messageId(engineId: string): string {
  return `msg_${engineId}`;
}

const stopReasons: Record<number, string> = {
  [FinishReason.STOP]: "end_turn",
  [FinishReason.LENGTH]: "max_tokens",
  [FinishReason.TOOL_CALLS]: "tool_use",
  [FinishReason.CONTENT_FILTER]: "refusal",
};

function stopReasonOf(reason: FinishReason): string {
  return stopReasons[reason] ?? "end_turn";
}

/**
 * Usage as Anthropic sends it on an ordinary call: no prompt cache (so its counts are 0), no
 * server tools, the standard tier. Key for key what the SDKs' stream accumulators end with (see
 * MessageStreamWriter), so a reassembled stream says what unary says. The SDK's Usage type
 * declares every key (nullable ones included) as always present, so each is sent.
 */
function usageOf(u: Usage | undefined) {
  return {
    input_tokens: u?.inputTokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: u?.outputTokens ?? 0,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    inference_geo: null,
    speed: null,
  };
}

/**
 * A text block. No `citations` key: scripts cite nothing, and the API leaves the key out of a
 * block without citations (the Vercel AI SDK's Anthropic provider refuses `"citations": null`
 * on a non-streamed answer, and every SDK reads a missing key as none).
 */
function textBlock(text: string): object {
  return { type: "text", text };
}

/** A tool_use block: the model called the tool itself (`caller` direct, not a server tool). */
function toolUseBlock(id: string, name: string, input: unknown): object {
  return { type: "tool_use", id, name, input, caller: { type: "direct" } };
}

/**
 * The message object around its content: unary's whole answer, or message_start's with no
 * content and no stop reason yet. No container, diagnostics or stop details: nothing here runs
 * code, caches prompts or explains a refusal.
 */
function messageOf(engineId: string, model: string, content: object[], stopReason: string | null, usage: Usage | undefined): object {
  return {
    id: messageId(engineId),
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usageOf(usage),
  };
}

/**
 * A tool call's `input`: its arguments text parsed. Anthropic's input is always an object, and a
 * script's mapping is written as one; a script may also write arguments as a JSON text that is a
 * list or a string, which is `input` as that value, as the SDKs' stream accumulators read the
 * same fragments. Empty arguments are `{}`, as they read an empty run of input_json_delta.
 * Scripts load only valid JSON arguments; a text that still failed to parse would go as a string.
 */
export function inputOf(args: string): unknown {
  if (args === "") return {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** A whole `message` object for a unary call. */
export function messageBody(response: GenerateResponse): object {
  const m = response.message;
  const content: object[] = [];
  // Anthropic sends no empty text block before tool calls; an empty reply has no blocks at all.
  if (m && m.content !== "") content.push(textBlock(m.content));
  for (const c of m?.toolCalls ?? []) content.push(toolUseBlock(c.id, c.name, inputOf(c.arguments)));
  return messageOf(response.id, response.model, content, stopReasonOf(response.finishReason), response.usage);
}

/**
 * One SSE event of type `type`, in the pieces it is written in (jsonPieces): Anthropic names
 * every event, and the Python SDK skips unnamed ones.
 */
export function sseEvent(type: string, body: object): Iterable<string> {
  return jsonPieces(`event: ${type}\ndata: `, body, "\n\n");
}

/** The last event of a stream that ended well. */
export const messageStopEvent = `event: message_stop\ndata: ${JSON.stringify({ type: "message_stop" })}\n\n`;

/**
 * Turns engine stream frames into Anthropic's SSE events, one engine frame to its own events, so
 * the chunking is exactly the script's: message_start and ping before the first; a text frame is
 * a text_delta of block 0; a tool call's first frame starts a tool_use block (closing the one
 * before), its argument fragments are input_json_delta; the final frame closes the open block and
 * sends message_delta. message_stop follows (end()).
 *
 * The engine counts tokens only in its final frame, so message_start carries zero counts and
 * message_delta the real ones: input_tokens, output_tokens and both cache counts, which is every
 * count the SDKs' accumulators take from it, so finalMessage() reports the unary usage.
 */
export class MessageStreamWriter {
  private started = false;
  /** The index of the open content block, -1 when none is open. */
  private open = -1;
  /** How many content blocks were started. */
  private blocks = 0;
  /** The engine's index of the tool call whose block is open, -1 when none (or text) is. */
  private tool = -1;

  private *start(f: GenerateStreamResponse): Generator<string> {
    const message = messageOf(f.id, f.model, [], null, undefined);
    yield* sseEvent("message_start", { type: "message_start", message });
    yield* sseEvent("ping", { type: "ping" });
  }

  private *close(): Generator<string> {
    if (this.open < 0) return;
    yield* sseEvent("content_block_stop", { type: "content_block_stop", index: this.open });
    this.open = -1;
  }

  private *begin(block: object): Generator<string> {
    yield* this.close();
    this.open = this.blocks++;
    yield* sseEvent("content_block_start", { type: "content_block_start", index: this.open, content_block: block });
  }

  private delta(delta: object): Iterable<string> {
    return sseEvent("content_block_delta", { type: "content_block_delta", index: this.open, delta });
  }

  /** The SSE events of one engine frame, made as the writer pulls them: message_start and ping first, then its own events. */
  *frame(f: GenerateStreamResponse): Generator<string> {
    if (!this.started) {
      this.started = true;
      yield* this.start(f);
    }
    switch (f.frame.case) {
      case "textDelta":
        // An empty chunk says nothing: unary sends no empty text block either. The engine sends
        // all text before any tool call, so the text block is block 0 when there is one.
        if (f.frame.value === "") return;
        if (this.open < 0 || this.tool >= 0) yield* this.begin(textBlock(""));
        this.tool = -1;
        yield* this.delta({ type: "text_delta", text: f.frame.value });
        return;
      case "toolCallDelta": {
        const d = f.frame.value;
        if (d.index !== this.tool || this.open < 0) {
          yield* this.begin(toolUseBlock(d.id, d.name, {}));
          this.tool = d.index;
        }
        if (d.arguments !== "") yield* this.delta({ type: "input_json_delta", partial_json: d.arguments });
        return;
      }
      case "final": {
        const { finishReason, usage } = f.frame.value;
        const u = usageOf(usage);
        yield* this.close();
        yield* sseEvent("message_delta", {
          type: "message_delta",
          delta: { stop_reason: stopReasonOf(finishReason), stop_sequence: null, stop_details: null, container: null },
          usage: {
            input_tokens: u.input_tokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: u.output_tokens,
            output_tokens_details: null,
            server_tool_use: null,
          },
        });
        return;
      }
      case undefined:
        return;
    }
  }
}
