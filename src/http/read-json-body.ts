import { Refusal, type BadRequest } from "./refusal.js";

/**
 * The deepest nesting of objects and lists a body may have. A JSON Schema in `parameters` is
 * rarely 20 deep; JSON.parse reads any depth, but JSON.stringify (the schema's text) and other
 * recursive walks overflow the stack near 10,000, so deeper bodies are refused up front.
 */
export const maxJsonDepth = 128;

/** Whether `value` nests objects and lists more than `limit` deep; iterative, so any depth is safe. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * Reads a request body with a dialect's parser: JSON first, then the depth guard, then `parse`,
 * whose Refusal (a field of the wrong shape) comes back as data, like the other two problems.
 * Every dialect refuses a body the same way, so one parser's 400s read like another's.
 */
export function readJsonBody<T>(text: string, parse: (body: unknown) => T): { value: T } | { error: BadRequest } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return { error: { message: `the request body is not valid JSON: ${(err as Error).message}`, param: null, code: "invalid_json" } };
  }
  if (nestedDeeperThan(body, maxJsonDepth)) {
    return { error: { message: `the request body nests objects and lists deeper than ${maxJsonDepth} levels`, param: null, code: "invalid_value" } };
  }
  try {
    return { value: parse(body) };
  } catch (err) {
    if (err instanceof Refusal) return { error: err.bad };
    throw err;
  }
}
