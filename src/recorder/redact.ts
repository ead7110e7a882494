/**
 * What never reaches a recorded script: the upstream's credential wherever it appears in a text
 * the recorder keeps (an error message that echoes the key, say), and the header and JSON field
 * names given to `--redact`, removed from recorded trailers and from tool call arguments and
 * any JSON object within them.
 */
export interface Redaction {
  /** Texts replaced by `[redacted]` in everything recorded (the API key). */
  secrets: readonly string[];
  /** Names (lowercase for headers; exact for JSON fields) removed. */
  names: ReadonlySet<string>;
}

export const noRedaction: Redaction = { secrets: [], names: new Set() };

/** A text with every secret replaced. */
export function scrub(text: string, r: Redaction): string {
  let out = text;
  for (const s of r.secrets) if (s) out = out.split(s).join("[redacted]");
  return out;
}

/** A JSON value with the named fields removed at any depth, and secrets scrubbed from its strings. */
function dropFields(value: unknown, r: Redaction): unknown {
  if (typeof value === "string") return scrub(value, r);
  if (Array.isArray(value)) return value.map((v) => dropFields(v, r));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !r.names.has(k)).map(([k, v]) => [k, dropFields(v, r)]));
  }
  return value;
}

/** Tool call arguments (a JSON text) with the named fields removed; a text that is not JSON is only scrubbed. */
export function redactArguments(text: string, r: Redaction): string {
  if (r.names.size === 0 && r.secrets.every((s) => !s || !text.includes(s))) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    const kept = JSON.stringify(dropFields(parsed, r));
    // Untouched arguments keep the upstream's own text, spacing and all.
    return kept === JSON.stringify(parsed) ? text : kept;
  } catch {
    return scrub(text, r);
  }
}

/** Trailers without the named headers, values scrubbed. */
export function redactTrailers(trailers: readonly [string, string][], r: Redaction): [string, string][] {
  return trailers.filter(([k]) => !r.names.has(k.toLowerCase())).map(([k, v]) => [k, scrub(v, r)]);
}
