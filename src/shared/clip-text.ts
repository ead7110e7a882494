/**
 * A text on one line, cut to `n` characters with an ellipsis: how a miss message and a log line
 * quote what the caller said. Runs of whitespace become one space, so a line stays a line.
 */
export function clipText(text: string, n = 60): string {
  // Only the head is looked at: a megabyte message costs no more than a short one.
  const flat = text
    .slice(0, n * 4)
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > n || text.length > n * 4 ? `${flat.slice(0, n)}…` : flat;
}

/**
 * The most characters of a caller's value an error message quotes. A session name or step id is
 * at most 128 characters when valid, so a refused one is quoted whole up to a little past that.
 */
export const maxQuotedChars = 140;

/**
 * A value the caller sent, quoted as JSON for an error message (a role, a type, a model id, a
 * session name): whole up to maxQuotedChars, else that much of it, `...` and its length. Every
 * message that repeats a caller's value goes through here, so a 3 MB `role` costs a 400 of about
 * 0.5 KB on every front, not 3 MB (and a status message never nears grpc-js's trailer limits).
 */
export function quoteClipped(value: unknown, n = maxQuotedChars): string {
  if (typeof value === "string") {
    return value.length <= n ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, n))}... (${value.length} characters)`;
  }
  // A list or object where a string belongs: quoted as JSON, cut the same way (a number is short).
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= n ? text : `${text.slice(0, n)}... (${text.length} characters of JSON)`;
}
