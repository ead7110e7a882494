import type { GenerateStreamResponse, ToolCallDelta } from "../../gen/modelstub/v1/model_pb.js";
import type { DialectStream } from "./dialect.js";
import type { HttpError } from "./http-error.js";
import { JoinedText, jsonPieces } from "./json-pieces.js";
import type { ResponseEcho } from "./parse-responses-request.js";
import {
  functionCallItem,
  functionCallItemId,
  incompleteReason,
  lastItemStatus,
  messageItem,
  messageItemId,
  outputItems,
  responseObject,
  textPart,
  type ItemStatus,
} from "./responses-wire.js";

/** A tool call as the stream has it so far: its arguments in the fragments they came in. */
interface StreamedCall {
  id: string;
  name: string;
  arguments: JoinedText;
}

/**
 * Turns engine stream frames into the Responses API's server-sent events: response.created and
 * response.in_progress before the first frame's events; the message item (added, its
 * output_text part, one output_text.delta per engine text frame, then done) while the text
 * streams; one function_call item per tool call (added with arguments "", one
 * function_call_arguments.delta per fragment, then done); and response.completed (or
 * response.incomplete) with the whole response, equal to the unary answer. One engine frame
 * gives one delta, so the chunking is exactly the script's, as over gRPC.
 *
 * The closing events repeat the whole text four times over (output_text.done, content_part.done,
 * output_item.done, response.completed), and the opening ones the request's instructions and
 * tools: rendered whole and at once, they were 23 MB a stream for a 960 KB echo of control
 * characters, held for a reader that never read. So each frame's events are a generator, run as
 * the writer pulls them (engine/paced-writer.ts), each event written in pieces (jsonPieces), and
 * the text and arguments are kept as the deltas they came in (JoinedText), never joined.
 */
export class ResponsesEventWriter implements DialectStream {
  private sequence = 0;
  private engineId = "";
  private model = "";
  private started = false;
  private readonly text = new JoinedText();
  /** The open message item's output index, or -1. */
  private message = -1;
  /** The open function_call item's output index, and its call's index in `calls`. */
  private call = -1;
  private readonly calls: StreamedCall[] = [];
  private items = 0;

  constructor(
    private readonly created: number,
    private readonly echo: ResponseEcho,
  ) {}

  /**
   * One SSE event: its type named in both the `event:` line and the data, numbered from 0 as it
   * is made (events are made in the order they are written).
   */
  private event(type: string, fields: object): Iterable<string> {
    return jsonPieces(`event: ${type}\ndata: `, { type, sequence_number: this.sequence++, ...fields }, "\n\n");
  }

  private *openMessage(): Generator<string> {
    this.message = this.items++;
    const at = { item_id: messageItemId(this.engineId), output_index: this.message, content_index: 0 };
    yield* this.event("response.output_item.added", { output_index: this.message, item: messageItem(this.engineId, "", "in_progress") });
    yield* this.event("response.content_part.added", { ...at, part: textPart("") });
  }

  private *closeMessage(status: ItemStatus = "completed"): Generator<string> {
    if (this.message < 0) return;
    const at = { item_id: messageItemId(this.engineId), output_index: this.message, content_index: 0 };
    yield* this.event("response.output_text.done", { ...at, text: this.text, logprobs: [] });
    yield* this.event("response.content_part.done", { ...at, part: textPart(this.text) });
    yield* this.event("response.output_item.done", { output_index: this.message, item: messageItem(this.engineId, this.text, status) });
    this.message = -1;
  }

  private *closeCall(status: ItemStatus = "completed"): Generator<string> {
    if (this.call < 0) return;
    const index = this.calls.length - 1;
    const c = this.calls[index]!;
    yield* this.event("response.function_call_arguments.done", {
      item_id: functionCallItemId(this.engineId, index),
      output_index: this.call,
      name: c.name,
      arguments: c.arguments,
    });
    yield* this.event("response.output_item.done", { output_index: this.call, item: functionCallItem(this.engineId, index, c, status) });
    this.call = -1;
  }

  private *toolDelta(d: ToolCallDelta): Generator<string> {
    // Text comes before tool calls, so the message (if any) is over once the first call starts.
    yield* this.closeMessage();
    // A new index starts a call: its first delta names it (id and name), later ones carry fragments.
    if (d.index !== this.calls.length - 1 || this.call < 0) {
      yield* this.closeCall();
      this.calls.push({ id: d.id, name: d.name, arguments: new JoinedText() });
      this.call = this.items++;
      const index = this.calls.length - 1;
      yield* this.event("response.output_item.added", {
        output_index: this.call,
        item: functionCallItem(this.engineId, index, this.calls[index]!, "in_progress"),
      });
    }
    if (d.arguments === "") return;
    const index = this.calls.length - 1;
    const delta = this.calls[index]!.arguments.add(d.arguments);
    yield* this.event("response.function_call_arguments.delta", { item_id: functionCallItemId(this.engineId, index), output_index: this.call, delta });
  }

  /** The events of one engine frame, made as the writer pulls them. */
  *frame(f: GenerateStreamResponse): Generator<string> {
    if (!this.started) {
      this.started = true;
      this.engineId = f.id;
      this.model = f.model;
      const response = responseObject(f.id, f.model, this.created, this.echo, { status: "in_progress" });
      yield* this.event("response.created", { response });
      yield* this.event("response.in_progress", { response });
    }
    switch (f.frame.case) {
      case "textDelta": {
        // An empty text frame says nothing: no message item for it (the unary answer has none either).
        if (f.frame.value === "") return;
        if (this.message < 0) yield* this.openMessage();
        const delta = this.text.add(f.frame.value);
        yield* this.event("response.output_text.delta", {
          item_id: messageItemId(this.engineId),
          output_index: this.message,
          content_index: 0,
          delta,
          logprobs: [],
        });
        return;
      }
      case "toolCallDelta":
        yield* this.toolDelta(f.frame.value);
        return;
      case "final": {
        const { finishReason, usage } = f.frame.value;
        // The item still open is the last one: the one a cut-off reply was cut off in.
        const last = lastItemStatus(finishReason);
        yield* this.call >= 0 ? this.closeCall(last) : this.closeMessage(last);
        // A reply that says nothing and calls nothing still has its (empty) message item.
        if (this.items === 0) {
          yield* this.openMessage();
          yield* this.closeMessage(last);
        }
        const output = outputItems(this.engineId, this.text, this.calls, finishReason);
        const response = responseObject(this.engineId, this.model, this.created, this.echo, { status: "finished", finishReason, usage, output });
        // The event names the response's status, as responseObject sets it.
        yield* this.event(incompleteReason(finishReason) ? "response.incomplete" : "response.completed", { response });
        return;
      }
      case undefined:
        return;
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
  error(e: HttpError): Iterable<string> {
    const inner = (e.body as { error: { code: string | null; message: string; param: string | null } }).error;
    return this.event("error", { code: inner.code, message: inner.message, param: inner.param, error: inner });
  }
}
