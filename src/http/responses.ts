import type { Stub } from "../engine/create-stub.js";
import { requestIdOf, type Dialect } from "./dialect.js";
import { httpErrorOf, openAiErrorShape } from "./http-error.js";
import type { HttpDialect } from "./http-dialect.js";
import { parseResponsesRequest, type ResponseEcho } from "./parse-responses-request.js";
import type { ItemLookup } from "./parse-responses-input.js";
import { ResponsesEventWriter } from "./responses-stream.js";
import { messageItemId, responseBody } from "./responses-wire.js";
import { responseIdOf } from "../shared/call-ids.js";

/** The Responses API on the wire; `echo` is what each answer repeats of its request. */
function responsesDialect(echo: ResponseEcho): Dialect {
  return {
    // OpenAI's error body and the same status table as chat completions.
    errorOf: (status) => httpErrorOf(status),
    // OpenAI's request id header, which the SDK exposes as `_request_id` (and `requestID` on an
    // error); derived from the response id, so the same every run.
    headers: (id) => [["x-request-id", requestIdOf(id)]],
    unaryBody: (response, created) => responseBody(response, created, echo),
    stream: (created) => new ResponsesEventWriter(created, echo),
  };
}

/**
 * The text of the message item `id` answered in `session`'s open episode: ids name their call
 * (msg_gen-<session>-<sequence>), so one call is decoded, and an id of another session, of a
 * call not recorded (yet), or of a call that answered no message, is none.
 */
function itemsOf(stub: Stub, session: string): ItemLookup {
  return (id) => {
    const sequence = Number(/-([1-9][0-9]{0,15})$/.exec(id)?.[1]);
    // The id this server gave that call's message: the session must be this one, too.
    if (!sequence || id !== messageItemId(responseIdOf(session, sequence))) return undefined;
    return stub.recordedCall(session, sequence)?.response?.message?.content;
  };
}

/**
 * `POST /v1/responses` (also `/responses`): one model call on the stub, answered as OpenAI's
 * Responses API does, a `response` object or its server-sent events with `"stream": true`.
 */
export const responses: HttpDialect = {
  shape: openAiErrorShape,
  read(body, stub, target) {
    const parsed = parseResponsesRequest(body, itemsOf(stub, target.session));
    if ("error" in parsed) return parsed;
    const { request, stream, echo } = parsed.value;
    return { value: { request, stream, wire: responsesDialect(echo) } };
  },
};
