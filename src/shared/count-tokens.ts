import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";

/**
 * The tokens of one text under the one documented token rule: its UTF-8 byte length divided by
 * 4, rounded up (`ceil(bytes / 4)`; an empty text is 0). Crude on purpose: it is deterministic in
 * every language, and a test that needs exact counts scripts them.
 *
 * A count of several texts is the sum of each text's rounded count, never the rounded count of
 * their bytes together: `Be brief.` (9 bytes, 3 tokens) and `Résumé?` (9 bytes, 3 tokens) make 6,
 * where 18 bytes rounded once would make 5. Each text adds less than one token of rounding.
 * Changing this would change the usage of recorded episodes, so it stays as it is.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(Buffer.byteLength(text, "utf8") / 4);
}

/**
 * Input tokens of a request: the sum of countTokens over every message's content (any role) and
 * every tool call's name and arguments, each text rounded on its own. Nothing else counts: not
 * the tools offered, message names, tool_call_id, model or sampling.
 */
export function countRequestTokens(req: GenerateRequest): number {
  let n = 0;
  for (const m of req.messages) {
    n += countTokens(m.content);
    for (const c of m.toolCalls) n += countTokens(c.name) + countTokens(c.arguments);
  }
  return n;
}

/** Output tokens of a reply: countTokens of its text, plus each tool call's name and arguments. */
export function countReplyTokens(text: string, toolCalls: readonly { name: string; arguments: string }[]): number {
  let n = countTokens(text);
  for (const c of toolCalls) n += countTokens(c.name) + countTokens(c.arguments);
  return n;
}
