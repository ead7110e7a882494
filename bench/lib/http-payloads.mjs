// The bytes of the http section: the chat-completions request every target gets, and the
// floor's constant reply. The request's text is what modelstub's "http" script replies, so
// mock-llm (whose default rule echoes the last user message) answers the same content.
import fs from "node:fs";
import path from "node:path";
import { CACHE_DIR } from "./paths.mjs";
import { MODEL, UNARY_REPLY } from "./payloads.mjs";

export const HTTP_TEXT = UNARY_REPLY;

/** POST /v1/chat/completions body, as the load generator sends it. */
export const httpRequestBody = () => JSON.stringify({ model: MODEL, messages: [{ role: "user", content: HTTP_TEXT }] });

const tokens = (s) => (s.length === 0 ? 0 : Math.ceil(Buffer.byteLength(s, "utf8") / 4));

/**
 * modelstub's reply to the request, built the way its HTTP front writes it (docs/http.md "Wire
 * output"), with a 4-digit call sequence in the id like the gRPC floor's reply. Used for the
 * floor when modelstub is not built; otherwise the floor answers modelstub's own reply.
 */
export function httpReplyConstant() {
  const input = tokens(HTTP_TEXT);
  const output = tokens(HTTP_TEXT);
  return JSON.stringify({
    id: "chatcmpl-gen-default-1000",
    object: "chat.completion",
    created: 1700000000,
    model: MODEL,
    system_fingerprint: "fp_modelstub",
    choices: [{ index: 0, message: { role: "assistant", content: HTTP_TEXT, refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  });
}

/** modelstub's id carries the call's sequence; set it to 1000 so the size is the typical one. */
export const normalizeReplyId = (body) => body.replace(/"chatcmpl-gen-default-\d+"/, '"chatcmpl-gen-default-1000"');

/** Writes the request and the floor's reply to the cache; returns their paths. */
export function writeHttpPayloads(reply) {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const requestFile = path.join(CACHE_DIR, "http-request.json");
  const replyFile = path.join(CACHE_DIR, "http-reply.json");
  fs.writeFileSync(requestFile, httpRequestBody());
  fs.writeFileSync(replyFile, reply);
  return { requestFile, replyFile };
}
