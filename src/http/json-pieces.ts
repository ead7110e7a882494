/**
 * How much text (in UTF-16 units, before escaping) one piece of a long JSON string holds, at
 * least (but the last) and at most twice over: with a response buffer of 64 KiB (send.ts), a stalled
 * reader holds at most that buffer plus one piece (8 KiB of text is at most 48 KiB escaped: six
 * bytes for a control character).
 */
export const pieceChars = 4096;

/**
 * A text kept as the parts it arrived in (a stream's deltas), written in JSON as the one string
 * they join to, without ever joining them: the Responses API repeats a reply's whole text in its
 * closing events, and a joined copy of a 1 MiB reply per stalled stream is what they held.
 */
export class JoinedText {
  readonly parts: string[] = [];
  length = 0;
  /** How many of the parts (the first ones) are known to hold nothing JSON escapes, or -1 once one does. */
  private plainParts = 0;

  /**
   * Adds a part; returns it as a JSON value to write it by (a stream's delta event): the part
   * itself, or, past a piece, the part alone in a JoinedText that knows whether it is plain, so
   * that it is not scanned a second time.
   */
  add(part: string): TextValue {
    const known = this.plainParts === this.parts.length;
    this.parts.push(part);
    this.length += part.length;
    if (part.length <= pieceChars) return part;
    const alone = new JoinedText();
    alone.parts.push(part);
    alone.length = part.length;
    alone.plainParts = escapes(part) ? -1 : 1;
    if (alone.plainParts < 0) this.plainParts = -1;
    else if (known) this.plainParts++;
    return alone;
  }

  /**
   * Whether no part holds a character JSON escapes, so the text is its own JSON escape: the
   * Responses API writes a reply's text four more times after its deltas, each once escaped
   * (docs/performance.md). Scans only the parts not scanned yet, once; short parts wait for
   * this, so a stream of short deltas scans nothing (its closing events are made whole).
   */
  get plain(): boolean {
    while (this.plainParts >= 0 && this.plainParts < this.parts.length) {
      if (escapes(this.parts[this.plainParts]!)) this.plainParts = -1;
      else this.plainParts++;
    }
    return this.plainParts >= 0;
  }

  /** The joined text, for JSON.stringify of a value too small to be written in pieces. */
  toJSON(): string {
    return this.parts.join("");
  }
}

/** A JSON string value: a string, or a text kept in its parts. */
export type TextValue = string | JoinedText;

/** Whether `v` holds a string longer than a piece (so JSON.stringify would make one long string of it). */
function holdsLong(v: unknown): boolean {
  if (typeof v === "string") return v.length > pieceChars;
  if (typeof v !== "object" || v === null) return false;
  if (v instanceof JoinedText) return v.length > pieceChars;
  if (Array.isArray(v)) return v.some(holdsLong);
  for (const k in v) if (holdsLong((v as Record<string, unknown>)[k])) return true;
  return false;
}

const escapedCharacter = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * Whether JSON.stringify escapes a character of `s`: a quote, a backslash, a control character
 * or a surrogate (it escapes lone ones; a pair is told apart by JSON.stringify itself). Most
 * text has none, and a regular expression's scan for them costs less than the escape.
 */
function escapes(s: string): boolean {
  return escapedCharacter.test(s);
}

/** The JSON escape of `s`, without its quotes: `s` itself when it has nothing to escape. */
function escaped(s: string): string {
  if (!escapes(s)) return s;
  const q = JSON.stringify(s);
  return q.slice(1, q.length - 1);
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/**
 * The JSON escape of the text `parts` join to, in pieces of pieceChars to twice that of text (a
 * stream's deltas, about 8 KiB each, are escaped as they are, not cut and joined to their
 * neighbours), equal byte for byte to JSON.stringify of the
 * joined text (without its quotes). JSON.stringify escapes a lone surrogate, so no piece ends
 * between the two halves of a pair: a piece that ends on a high surrogate leaves it to the next.
 */
function* stringPieces(parts: readonly string[], plain: boolean): Generator<string> {
  let carry = "";
  for (const part of parts) {
    let at = 0;
    while (at < part.length) {
      // Small parts gather into one piece; a long one is cut into pieces of pieceChars.
      const end = carry.length + part.length - at <= 2 * pieceChars ? part.length : at + pieceChars - carry.length;
      let text = at === 0 && end === part.length ? carry + part : carry + part.slice(at, end);
      at = end;
      carry = "";
      if (text.length < pieceChars) {
        carry = text;
        continue;
      }
      if (isHighSurrogate(text.charCodeAt(text.length - 1))) {
        carry = text.slice(-1);
        text = text.slice(0, -1);
      }
      yield plain ? text : escaped(text);
    }
  }
  if (carry !== "") yield plain ? carry : escaped(carry);
}

/** The fragments of `v` in JSON, as JSON.stringify writes it, long strings cut into pieces. */
function* fragments(v: unknown): Generator<string> {
  if (!holdsLong(v)) {
    yield JSON.stringify(v) ?? "null";
    return;
  }
  if (typeof v === "string" || v instanceof JoinedText) {
    yield '"';
    yield* typeof v === "string" ? stringPieces([v], false) : stringPieces(v.parts, v.plain);
    yield '"';
  } else if (Array.isArray(v)) {
    yield "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ",";
      yield* fragments(v[i]);
    }
    yield "]";
  } else {
    let first = true;
    yield "{";
    for (const [k, x] of Object.entries(v as object)) {
      // JSON.stringify leaves out what JSON cannot say.
      if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
      yield `${first ? "" : ","}${JSON.stringify(k)}:`;
      first = false;
      yield* fragments(x);
    }
    yield "}";
  }
}

/**
 * `head`, then `value` in JSON, then `tail`, as pieces of about pieceChars each: the bytes of
 * head + JSON.stringify(value) + tail. A value with no long string is one piece, made at once;
 * a long one is made piece by piece as they are pulled, so a writer that waits for its reader
 * never holds it whole (the plain data the HTTP fronts send: no toJSON but JoinedText's).
 */
export function jsonPieces(head: string, value: unknown, tail: string): Iterable<string> {
  if (!holdsLong(value)) return [head + JSON.stringify(value) + tail];
  return joinSmall(head, fragments(value), tail);
}

/** Joins consecutive small fragments into pieces of about pieceChars, so each write carries something. */
function* joinSmall(head: string, parts: Iterable<string>, tail: string): Generator<string> {
  let piece = head;
  for (const p of parts) {
    if (piece.length + p.length > pieceChars && piece !== "") {
      yield piece;
      piece = p;
    } else piece += p;
  }
  yield piece + tail;
}
