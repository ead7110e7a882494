import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";

/**
 * The one documented token rule: one token per 4 UTF-8 bytes, rounded up. Crude on purpose:
 * it is deterministic in every language, and a test that needs exact counts scripts them.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(Buffer.byteLength(text, "utf8") / 4);
}

/** Input tokens of a request: every message's content, and every tool call's name and arguments. */
export function countRequestTokens(req: GenerateRequest): number {
  let n = 0;
  for (const m of req.messages) {
    n += countTokens(m.content);
    for (const c of m.toolCalls) n += countTokens(c.name) + countTokens(c.arguments);
  }
  return n;
}
