import type { CallStatus } from "../script/compiled-script.js";
import { quoteClipped } from "../shared/clip-text.js";
import { stepIdGrammar, stepIdPattern } from "../shared/step-id.js";
import { Code } from "../shared/status-code.js";

const allowed = /^[A-Za-z0-9._:/-]$/;

/** `";" (U+003B)`: the character as JSON shows it, and its code point, so spaces and look-alikes are plain. */
function describeCharacter(c: string): string {
  return `${JSON.stringify(c)} (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")})`;
}

/** What breaks the grammar in `id`, as a clause: its first bad character, its length, or both. */
function whatIsWrong(id: string): string {
  const chars = [...id];
  const problems: string[] = [];
  const bad = chars.findIndex((c) => !allowed.test(c));
  if (bad >= 0) problems.push(`character ${bad + 1} is ${describeCharacter(chars[bad]!)}`);
  if (chars.length > 128) problems.push(`it is ${chars.length} characters long`);
  return problems.join(" and ");
}

/**
 * Checks a step id a request names, `where` saying which field or header carried it (like
 * `the request's step_id`). An empty id means "no step" and passes. A malformed one is refused
 * before the call runs (INVALID_ARGUMENT, recorded in no episode), as a bad session name is:
 * no script can have such a step, and answering NOT_FOUND would record a client's bug as a
 * script miss.
 */
export function checkStepId(id: string, where: string): CallStatus | undefined {
  if (id === "" || stepIdPattern.test(id)) return undefined;
  return {
    code: Code.INVALID_ARGUMENT,
    message: `invalid step id ${quoteClipped(id)} in ${where}: ${whatIsWrong(id)}; ${stepIdGrammar}`,
    trailers: [],
  };
}

/**
 * Checks both step ids a call may carry, the request's `step_id` field and the
 * `x-modelstub-step` key, sent as gRPC metadata or as an HTTP header (`carrier`).
 */
export function checkStepIds(fromRequest: string, fromKey: string, carrier: "metadata" | "header"): CallStatus | undefined {
  return checkStepId(fromRequest, "the request's step_id") ?? checkStepId(fromKey, `${carrier} x-modelstub-step`);
}
