import type { GenerateResponse, GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { CallStatus } from "../script/compiled-script.js";
import type { HttpError } from "./http-error.js";

/**
 * One HTTP dialect of a model call (chat completions, Anthropic Messages, OpenAI Responses): how
 * the engine's answer is written on the wire. The call itself is run the same way for every
 * dialect (answerCall, answer-call.ts), so all of them record the same episode.
 */
export interface Dialect {
  /**
   * The error answer for an engine status: HTTP status, headers, body in the dialect's shape.
   * `id` is the engine's response id when the call ran (absent when it was refused before it
   * ran), for dialects whose error bodies name their request.
   */
  errorOf(status: CallStatus, id?: string): HttpError;
  /** The whole body of a unary answer. `created` is the call's declared start in epoch seconds. */
  unaryBody(response: GenerateResponse, created: number): object;
  /**
   * Headers naming the answer, from the engine's response id (none when absent): sent with a
   * successful answer, and with the error answer of a call that ran.
   */
  headers?(id: string): [string, string][];
  /** A writer for one streamed answer, made when its first frame arrives. */
  stream(created: number): DialectStream;
}

/**
 * Writes one streamed answer as server-sent events. Events are iterables of the pieces they are
 * written in, made as the writer pulls them (a generator): the writer takes the next piece only
 * when the response has room (engine/paced-writer.ts), so nothing is rendered ahead of a slow
 * reader, and an event carrying a long text is never one long string (see json-pieces.ts).
 */
export interface DialectStream {
  /** The SSE events of one engine frame, the final frame included (may be several events, or none). */
  frame(f: GenerateStreamResponse): Iterable<string>;
  /** What follows the final frame of a stream that ended well (OpenAI's `[DONE]`; may be ""). */
  end(): string;
  /** The event that reports an error once the 200 and some events have gone out. */
  error(e: HttpError): Iterable<string>;
}

/** The headers of every streamed answer. */
export const sseHeaders: [string, string][] = [
  ["content-type", "text/event-stream; charset=utf-8"],
  ["cache-control", "no-cache"],
];

/**
 * The request id naming the answer of the call whose engine response id is `id`, in every
 * dialect: Anthropic's `request-id` header and error `request_id`, OpenAI's `x-request-id`.
 * Derived, so the same every run.
 */
export function requestIdOf(id: string): string {
  return `req_${id}`;
}
