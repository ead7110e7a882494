import { requestLimits } from "../engine/request-limits.js";
import { limitCount } from "./refusal.js";

/** How a dialect that nests tool calls and results in its turns names them in a refusal. */
export interface TurnNames {
  /** The body's list of turns (`messages`, `contents`). */
  list: string;
  /** A turn's list of blocks (`content`, `parts`). */
  blocks: string;
  /** What a tool call is there (`tool_use blocks`). */
  toolCalls: string;
  /** A tool result block, each an engine message of its own (`tool_result block`). */
  results: string;
  /** The system prompt's name there (`system prompt`), the first engine message. */
  system: string;
}

/**
 * The request limits (engine/request-limits.ts) of a body whose turns carry tool calls and
 * results as blocks (Anthropic's messages, Gemini's contents), before anything is built from the
 * list: tool calls per turn and in all, engine messages (a tool result block is a message of its
 * own, as in chat completions; so is the system prompt, the first engine message). `countsOf`
 * counts one turn. Refuses the first limit passed.
 */
export function limitTurns(
  list: readonly unknown[],
  countsOf: (turn: unknown) => { messages: number; toolCalls: number },
  names: TurnNames,
  hasSystem: boolean,
): void {
  let messages = hasSystem ? 1 : 0;
  let calls = 0;
  list.forEach((turn, i) => {
    const n = countsOf(turn);
    limitCount(`${names.list}[${i}].${names.blocks}`, n.toolCalls, names.toolCalls, requestLimits.toolCallsPerMessage, "in a message");
    messages += n.messages;
    calls += n.toolCalls;
  });
  limitCount(names.list, messages, `messages, counting each ${names.results} and the ${names.system} as one`, requestLimits.messages, "in a request");
  limitCount("the request", calls, `${names.toolCalls} in all its ${names.list}`, requestLimits.toolCalls, "in a request", names.list);
}
