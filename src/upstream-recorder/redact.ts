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

const simpleEscapes: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * A text with JSON string escapes (`\u0073`, `\/`, `\n`) decoded, leniently, outside any JSON
 * text too: an upstream can spell the key `\u0073\u006b...` in a text the recorder keeps
 * verbatim, and a reader of the script decodes that at a glance.
 */
const unescaped = (text: string) =>
  text.replace(/\\u([0-9a-fA-F]{4})|\\(["\\/bfnrt])/g, (_, hex: string | undefined, c: string) =>
    hex ? String.fromCharCode(parseInt(hex, 16)) : (simpleEscapes[c] ?? c),
  );

/**
 * A text with every secret replaced. A text that holds a secret only once its escapes are
 * decoded is kept decoded, with the secret replaced: no escaping of the key survives.
 */
export function scrub(text: string, r: Redaction): string {
  const secrets = r.secrets.filter((s) => s);
  if (secrets.length === 0) return text;
  const decoded = text.includes("\\") ? unescaped(text) : text;
  const source = decoded !== text && secrets.some((s) => decoded.includes(s)) ? decoded : text;
  let out = source;
  for (const s of secrets) out = out.split(s).join("[redacted]");
  return out;
}

/**
 * A text cut to at most `maxBytes` UTF-8 bytes that cannot end in the first characters of a
 * secret: a cut through a key would keep its prefix, which no scrub finds. Scrub before clipping.
 */
export function clipScrubbed(text: string, maxBytes: number, r: Redaction): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let out = text;
  while (Buffer.byteLength(out) > maxBytes) out = out.slice(0, -1);
  // Trimming one key's prefix can leave another's: trimmed until no secret's prefix ends it.
  for (let trimmed = true; trimmed; ) {
    trimmed = false;
    for (const s of r.secrets) {
      const n = [...Array(Math.min(s.length - 1, out.length)).keys()]
        .map((i) => i + 1)
        .reverse()
        .find((k) => out.endsWith(s.slice(0, k)));
      if (n !== undefined) [out, trimmed] = [out.slice(0, -n), true];
    }
  }
  return out;
}

/** A JSON value with the named fields removed at any depth, and secrets scrubbed from its strings and keys. */
function dropFields(value: unknown, r: Redaction): unknown {
  if (typeof value === "string") return scrub(value, r);
  if (Array.isArray(value)) return value.map((v) => dropFields(v, r));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !r.names.has(k))
        .map(([k, v]) => [scrub(k, r), dropFields(v, r)]),
    );
  }
  return value;
}

/**
 * Tool call arguments (a JSON text) with the named fields removed and secrets scrubbed. With a
 * secret set the text is always parsed: its strings are compared decoded, so an escaped key
 * (`"\u0073k-..."`) is found too. A text that is not JSON is only scrubbed.
 */
export function redactArguments(text: string, r: Redaction): string {
  if (r.names.size === 0 && r.secrets.every((s) => !s)) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    const kept = JSON.stringify(dropFields(parsed, r));
    // Untouched arguments keep the upstream's own text, spacing and all.
    return kept === JSON.stringify(parsed) && scrub(text, r) === text ? text : kept;
  } catch {
    return scrub(text, r);
  }
}

/** Trailers without the named headers, values scrubbed. */
export function redactTrailers(trailers: readonly [string, string][], r: Redaction): [string, string][] {
  return trailers.filter(([k]) => !r.names.has(k.toLowerCase())).map(([k, v]) => [k, scrub(v, r)]);
}
