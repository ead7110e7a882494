import type { ServerResponse } from "node:http";
import type { Stub } from "../engine/create-stub.js";
import { Code } from "../shared/status-code.js";
import { anthropicErrorOf, anthropicErrorShape } from "./anthropic-error.js";
import { messageBody, MessageStreamWriter, messageStopEvent, sseEvent } from "./anthropic-wire.js";
import { refused } from "./answer-call.js";
import { requestIdOf, type Dialect } from "./dialect.js";
import { badRequestError } from "./http-error.js";
import type { HttpRequestLog } from "./http-log.js";
import type { HttpDialect } from "./http-dialect.js";
import { parseAnthropicRequest, parseCountTokensRequest } from "./parse-anthropic-request.js";
import { sendError, sendJson } from "./send.js";
import { countRequestTokens } from "../shared/count-tokens.js";

// route.ts shapes the front's own errors on /v1/messages (405, 413) with it.
export { anthropicErrorShape } from "./anthropic-error.js";

/** Anthropic Messages on the wire. */
const messagesWire: Dialect = {
  errorOf: anthropicErrorOf,
  // The SDKs read it as the answer's `_request_id`; derived from the response id, so the same every run.
  headers: (id) => [["request-id", requestIdOf(id)]],
  // `created` has no place in Anthropic's message.
  unaryBody: (response) => messageBody(response),
  stream() {
    const writer = new MessageStreamWriter();
    return {
      frame: (f) => writer.frame(f),
      end: () => messageStopEvent,
      // Anthropic's error event, then the end of the body without message_stop: the SDKs throw it.
      error: (e) => sseEvent("error", e.body),
    };
  },
};

/**
 * `POST /v1/messages`: one model call on the stub, answered as Anthropic's Messages API does,
 * unary or as server-sent events, and recorded in the same episode as the same call over chat
 * completions or gRPC.
 */
export const anthropicMessages: HttpDialect = {
  shape: anthropicErrorShape,
  read(body) {
    const parsed = parseAnthropicRequest(body);
    if ("error" in parsed) return parsed;
    return { value: { ...parsed.value, wire: messagesWire } };
  },
};

/**
 * `POST /v1/messages/count_tokens` (Claude Code calls it before its turns): `{input_tokens}`, the
 * token rule's count of the request as a model call would build it (count-tokens.ts), which is
 * the `input_tokens` the same request's answer reports unless the script sets usage. Not a model
 * call: it takes no entry, and the episode does not record it, so an episode does not depend on
 * how often a client counts. A body a model call would refuse is refused the same way (400).
 */
export async function anthropicCountTokens(_stub: Stub, res: ServerResponse, body: string): Promise<Partial<HttpRequestLog>> {
  const parsed = parseCountTokensRequest(body);
  if ("error" in parsed) {
    sendError(res, badRequestError(parsed.error, anthropicErrorShape));
    return { status: 400, ...refused(Code.INVALID_ARGUMENT, parsed.error.message) };
  }
  sendJson(res, 200, { input_tokens: countRequestTokens(parsed.value.request) });
  return { status: 200 };
}
