import { requestIdOf, type Dialect } from "./dialect.js";
import { httpErrorOf, openAiErrorShape } from "./http-error.js";
import type { HttpDialect } from "./http-dialect.js";
import { ChunkWriter, completionBody, completionId, doneEvent, event } from "./openai-wire.js";
import { parseChatRequest } from "./parse-chat-request.js";

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
 * server-sent events.
 */
export const chatCompletions: HttpDialect = {
  shape: openAiErrorShape,
  read(body, _stub, target) {
    const parsed = parseChatRequest(body);
    if ("error" in parsed) return parsed;
    const { request, stream, includeUsage } = parsed.value;
    return { value: { request, stream, wire: chatDialect(includeUsage, target.processingComments === true) } };
  },
};
