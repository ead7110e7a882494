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

/** How long an ASCII string must be to be scanned four characters at a time (below, the regular expression costs less than the copy). */
const minWordScanChars = 1024;

/** The Latin-1 copy a long ASCII string is scanned in: one, reused (the scan is synchronous), grown as needed. */
let scanWords = new Int32Array(4096);

/**
 * Whether JSON.stringify escapes a character of `s`: a quote, a backslash, a control character
 * or a surrogate (it escapes lone ones; a pair is told apart by JSON.stringify itself). Most
 * text has none. A long ASCII string (as many UTF-8 bytes as characters: no surrogate) is read
 * as 32-bit words of its Latin-1 copy, four characters at a time: a byte below 0x20, or one
 * equal to 0x22 or 0x5c, sets bit 7 of the "has less than" sums below, and every byte is below
 * 0x80, so no sum borrows across bytes. The regular expression's scan of a 960 KB echo cost
 * 1.3-2.2 ms of its Responses stream, which scans each delta once; this one 0.5 ms
 * (docs/performance.md, "Streaming costs what unary costs"). Other strings get the regular
 * expression; `test/http/json-pieces.test.ts` holds the two to the same answers.
 */
export function escapes(s: string): boolean {
  const n = s.length;
  if (n < minWordScanChars || Buffer.byteLength(s) !== n) return escapedCharacter.test(s);
  const words = (n + 3) >>> 2;
  if (words > scanWords.length) scanWords = new Int32Array(words);
  const w = scanWords;
  const bytes = Buffer.from(w.buffer, 0, words * 4);
  bytes.write(s, 0, n, "latin1");
  // Padded with letters, which are escaped by nothing.
  bytes.fill(0x41, n);
  let found = 0;
  for (let i = 0; i < words; i++) {
    const x = w[i]!;
    const quote = x ^ 0x22222222;
    const backslash = x ^ 0x5c5c5c5c;
    found |= ((x - 0x20202020) & ~x) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash);
    // Most text that has one has it early (a line break): stop at the first kilobyte that does.
    if ((i & 255) === 255 && (found & 0x80808080) !== 0) return true;
  }
  return (found & 0x80808080) !== 0;
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
 * How much text one piece of a plain text holds (one with nothing JSON escapes), at least, and at
 * most twice over: twice pieceChars, for the same bound in bytes. A plain text's character is
 * at most three bytes of UTF-8 (a surrogate is never plain), where an escaped one is up to six.
 * So the deltas of a long stream (16 KiB each, plan-frames.ts) go whole, and the Responses
 * API's four repeats of a 960 KB reply are written in 240 pieces, not 960.
 */
export const plainPieceChars = 2 * pieceChars;

/**
 * The JSON escape of the text `parts` join to, in pieces of pieceChars to twice that of text
 * (plainPieceChars of plain text: a stream's deltas, up to that long, are escaped as they are,
 * not cut and joined to their neighbours), equal byte for byte to JSON.stringify of the joined
 * text (without its quotes). JSON.stringify escapes a lone surrogate, so no piece ends between
 * the two halves of a pair: a piece that ends on a high surrogate leaves it to the next.
 */
function* stringPieces(parts: readonly string[], plain: boolean): Generator<string> {
  const size = plain ? plainPieceChars : pieceChars;
  let carry = "";
  for (const part of parts) {
    let at = 0;
    while (at < part.length) {
      // Small parts gather into one piece; a long one is cut into pieces of `size`.
      const end = carry.length + part.length - at <= 2 * size ? part.length : at + size - carry.length;
      let text = at === 0 && end === part.length ? carry + part : carry + part.slice(at, end);
      at = end;
      carry = "";
      if (text.length < size) {
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
    // A long string is scanned once, whole: plain, it goes in pieces of plainPieceChars, unscanned.
    yield* typeof v === "string" ? stringPieces([v], !escapes(v)) : stringPieces(v.parts, v.plain);
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
