import { Refusal, type BadRequest } from "./refusal.js";
import { scanJsonBody, type BodyLimits } from "./scan-json-body.js";

/**
 * Parses a request body's text with a dialect's parser: the bounds first (scanJsonBody: nesting, the
 * dialect's `limits` on its lists, the number of values, in one pass before anything is parsed),
 * then JSON, then `parse`, whose Refusal (a field of the wrong shape) comes back as data, like
 * the other two problems. Every dialect refuses a body the same way, so one parser's 400s read
 * like another's.
 */
export function parseJsonBody<T>(text: string, parse: (body: unknown) => T, limits: BodyLimits): { value: T } | { error: BadRequest } {
  const over = scanJsonBody(text, limits);
  if (over) return { error: over };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return { error: { message: `the request body is not valid JSON: ${(err as Error).message}`, param: null, code: "invalid_json" } };
  }
  try {
    return { value: parse(body) };
  } catch (err) {
    if (err instanceof Refusal) return { error: err.bad };
    throw err;
  }
}
