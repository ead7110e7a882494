import type { ServerResponse } from "node:http";
import type { Stub } from "../engine/create-stub.js";
import { Code } from "../shared/status-code.js";
import { answerCall, refused, type CallTarget } from "./answer-call.js";
import { requestIdOf, type Dialect } from "./dialect.js";
import { badRequestError, httpErrorOf } from "./http-error.js";
import type { HttpRequestLog } from "./http-log.js";
import { ChunkWriter, completionBody, completionId, doneEvent, event } from "./openai-wire.js";
import { parseChatRequest } from "./parse-chat-request.js";
import { sendError } from "./send.js";

/** Who a chat request is for: session and step from the x-modelstub-* headers. */
export type ChatTarget = CallTarget;

/** OpenRouter's keep-alive: an SSE comment, which every SSE parser must skip. */
const processingComment = ": OPENROUTER PROCESSING\n\n";

/**
 * Chat completions on the wire; `includeUsage` is the request's `stream_options.include_usage`,
 * `comments` the server's --openrouter-comments (one comment line before a stream's first
 * event: a fixed count, not a timer, so the body is the same bytes in every run).
 */
function chatDialect(includeUsage: boolean, comments: boolean): Dialect {
  return {
    errorOf: (status) => httpErrorOf(status),
    unaryBody: completionBody,
    // OpenRouter's header naming the generation (its ids are gen-...), ours the completion id;
    // and OpenAI's request id, which the SDK exposes as `_request_id` (`requestID` on an error).
    headers: (id) => [
      ["x-generation-id", completionId(id)],
      ["x-request-id", requestIdOf(id)],
    ],
    stream(created) {
      const chunks = new ChunkWriter(created, includeUsage);
      let first = comments;
      return {
        *frame(f) {
          if (first) {
            first = false;
            yield processingComment;
          }
          yield* chunks.frame(f);
        },
        end: () => doneEvent,
        // An error event in OpenAI's shape, then the end of the body without [DONE].
        error: (e) => event(e.body),
      };
    },
  };
}

/**
 * `POST /v1/chat/completions`: one model call on the stub, answered as OpenAI does, unary or as
 * server-sent events. Resolves with the log fields once the answer has ended; never rejects
 * (a parser bug rejects, and the server answers 500).
 */
export async function chatCompletions(stub: Stub, res: ServerResponse, body: string, target: ChatTarget): Promise<Partial<HttpRequestLog>> {
  // Parsed here, so the body's text (escapes and all, up to --max-message-bytes) is not held by
  // a call that waits on a slow reader.
  const parsed = parseChatRequest(body);
  if ("error" in parsed) {
    sendError(res, badRequestError(parsed.error));
    return { status: 400, ...refused(Code.INVALID_ARGUMENT, parsed.error.message) };
  }
  const { request, stream, includeUsage } = parsed.value;
  return answerCall(stub, res, { request, stream }, target, chatDialect(includeUsage, target.processingComments === true));
}
