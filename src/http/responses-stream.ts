import type { GenerateStreamResponse, ToolCallDelta } from "../../gen/modelstub/v1/model_pb.js";
import type { DialectStream } from "./dialect.js";
import type { HttpError } from "./http-error.js";
import type { ResponseEcho } from "./parse-responses-request.js";
import { functionCallItem, functionCallItemId, incompleteReason, lastItemStatus, messageItem, messageItemId, outputItems, responseObject, textPart, type CallParts, type ItemStatus } from "./responses-wire.js";

/**
 * Turns engine stream frames into the Responses API's server-sent events: response.created and
 * response.in_progress before the first frame's events; the message item (added, its
 * output_text part, one output_text.delta per engine text frame, then done) while the text
 * streams; one function_call item per tool call (added with arguments "", one
 * function_call_arguments.delta per fragment, then done); and response.completed (or
 * response.incomplete) with the whole response, equal to the unary answer. One engine frame
 * gives one delta, so the chunking is exactly the script's, as over gRPC.
 */
export class ResponsesEventWriter implements DialectStream {
  private sequence = 0;
  private engineId = "";
  private model = "";
  private started = false;
  private text = "";
  /** The open message item's output index, or -1. */
  private message = -1;
  /** The open function_call item's output index, and its call's index in `calls`. */
  private call = -1;
  private readonly calls: CallParts[] = [];
  private items = 0;

  constructor(
    private readonly created: number,
    private readonly echo: ResponseEcho,
  ) {}

  /** One SSE event: its type named in both the `event:` line and the data, numbered from 0. */
  private event(type: string, fields: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`;
  }

  private openMessage(): string {
    this.message = this.items++;
    const at = { item_id: messageItemId(this.engineId), output_index: this.message, content_index: 0 };
    return (
      this.event("response.output_item.added", { output_index: this.message, item: messageItem(this.engineId, "", "in_progress") }) +
      this.event("response.content_part.added", { ...at, part: textPart("") })
    );
  }

  private closeMessage(status: ItemStatus = "completed"): string {
    if (this.message < 0) return "";
    const at = { item_id: messageItemId(this.engineId), output_index: this.message, content_index: 0 };
    const out =
      this.event("response.output_text.done", { ...at, text: this.text, logprobs: [] }) +
      this.event("response.content_part.done", { ...at, part: textPart(this.text) }) +
      this.event("response.output_item.done", { output_index: this.message, item: messageItem(this.engineId, this.text, status) });
    this.message = -1;
    return out;
  }

  private closeCall(status: ItemStatus = "completed"): string {
    if (this.call < 0) return "";
    const index = this.calls.length - 1;
    const c = this.calls[index]!;
    const out =
      this.event("response.function_call_arguments.done", { item_id: functionCallItemId(this.engineId, index), output_index: this.call, name: c.name, arguments: c.arguments }) +
      this.event("response.output_item.done", { output_index: this.call, item: functionCallItem(this.engineId, index, c, status) });
    this.call = -1;
    return out;
  }

  private toolDelta(d: ToolCallDelta): string {
    // Text comes before tool calls, so the message (if any) is over once the first call starts.
    let out = this.closeMessage();
    // A new index starts a call: its first delta names it (id and name), later ones carry fragments.
    if (d.index !== this.calls.length - 1 || this.call < 0) {
      out += this.closeCall();
      this.calls.push({ id: d.id, name: d.name, arguments: "" });
      this.call = this.items++;
      const index = this.calls.length - 1;
      out += this.event("response.output_item.added", { output_index: this.call, item: functionCallItem(this.engineId, index, this.calls[index]!, "in_progress") });
    }
    if (d.arguments === "") return out;
    const index = this.calls.length - 1;
    this.calls[index]!.arguments += d.arguments;
    return out + this.event("response.function_call_arguments.delta", { item_id: functionCallItemId(this.engineId, index), output_index: this.call, delta: d.arguments });
  }

  frame(f: GenerateStreamResponse): string {
    let out = "";
    if (!this.started) {
      this.started = true;
      this.engineId = f.id;
      this.model = f.model;
      const response = responseObject(f.id, f.model, this.created, this.echo, { status: "in_progress" });
      out += this.event("response.created", { response }) + this.event("response.in_progress", { response });
    }
    switch (f.frame.case) {
      case "textDelta": {
        // An empty text frame says nothing: no message item for it (the unary answer has none either).
        if (f.frame.value === "") return out;
        if (this.message < 0) out += this.openMessage();
        this.text += f.frame.value;
        return out + this.event("response.output_text.delta", { item_id: messageItemId(this.engineId), output_index: this.message, content_index: 0, delta: f.frame.value, logprobs: [] });
      }
      case "toolCallDelta":
        return out + this.toolDelta(f.frame.value);
      case "final": {
        const { finishReason, usage } = f.frame.value;
        // The item still open is the last one: the one a cut-off reply was cut off in.
        const last = lastItemStatus(finishReason);
        out += this.call >= 0 ? this.closeCall(last) : this.closeMessage(last);
        // A reply that says nothing and calls nothing still has its (empty) message item.
        if (this.items === 0) out += this.openMessage() + this.closeMessage(last);
        const output = outputItems(this.engineId, this.text, this.calls, finishReason);
        const response = responseObject(this.engineId, this.model, this.created, this.echo, { status: "finished", finishReason, usage, output });
        // The event names the response's status, as responseObject sets it.
        return out + this.event(incompleteReason(finishReason) ? "response.incomplete" : "response.completed", { response });
      }
      case undefined:
        return out;
    }
  }

  /** Nothing follows response.completed: the Responses API sends no `[DONE]`. */
  end(): string {
    return "";
  }

  /**
   * An `error` event with the fields of the SDK's ResponseErrorEvent (code, message, param) and
   * also OpenAI's `error` object: the SDK's stream reader throws an APIError for any event whose
   * data has an `error` field, and for nothing else (it hands `response.failed` and a bare
   * `error` event to the caller as events). Then the body ends without response.completed.
   */
  error(e: HttpError): string {
    const inner = (e.body as { error: { code: string | null; message: string; param: string | null } }).error;
    return this.event("error", { code: inner.code, message: inner.message, param: inner.param, error: inner });
  }
}
