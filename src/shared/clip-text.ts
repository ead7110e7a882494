/**
 * A text on one line, cut to `n` characters with an ellipsis: how a miss message and a log line
 * quote what the caller said. Runs of whitespace become one space, so a line stays a line.
 */
export function clipText(text: string, n = 60): string {
  // Only the head is looked at: a megabyte message costs no more than a short one.
  const flat = text.slice(0, n * 4).replace(/\s+/g, " ").trim();
  return flat.length > n || text.length > n * 4 ? `${flat.slice(0, n)}…` : flat;
}
