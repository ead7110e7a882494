/** How to cut text into stream chunks. */
export type Chunking = { kind: "words" } | { kind: "none" } | { kind: "chars"; n: number };

/**
 * Whether the UTF-16 code unit `c` is whitespace as a regular expression's `\s` says (ECMAScript
 * WhiteSpace and LineTerminator): the words rule is `\S+\s*|\s+`, and chunkEnd scans it by hand.
 */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/**
 * Where the chunk of `text` that starts at `from` (< text.length) ends, by rule: `words` is a
 * word with the whitespace after it (or the whitespace a text starts with), `chars` counts `n`
 * code points so no chunk splits a surrogate pair, `none` is the rest of the text. Reads the
 * text in place: cutting a 1 MiB echo into half a million strings (and as many chunk objects)
 * was most of what a streamed reply cost, though at most 4,096 frames are sent (plan-frames.ts).
 */
export function chunkEnd(text: string, rule: Chunking, from: number): number {
  const length = text.length;
  let i = from;
  switch (rule.kind) {
    case "none":
      return length;
    case "words":
      if (isSpace(text.charCodeAt(i))) {
        while (i < length && isSpace(text.charCodeAt(i))) i++;
        return i;
      }
      while (i < length && !isSpace(text.charCodeAt(i))) i++;
      while (i < length && isSpace(text.charCodeAt(i))) i++;
      return i;
    case "chars":
      for (let k = 0; k < rule.n && i < length; k++) {
        const c = text.charCodeAt(i++);
        // A high surrogate and the low one after it are one code point, as Array.from counts.
        if (c >= 0xd800 && c <= 0xdbff && i < length) {
          const d = text.charCodeAt(i);
          if (d >= 0xdc00 && d <= 0xdfff) i++;
        }
      }
      return i;
  }
}

/** 1 for the Latin-1 code units that are whitespace (isSpace), 0 for the rest: one load per character of a scan. */
const latin1Space = new Uint8Array(256);
for (let c = 0; c < 256; c++) latin1Space[c] = isSpace(c) ? 1 : 0;

/** `ends` with room for one more (doubled when full). */
function roomy(ends: Uint32Array<ArrayBuffer>, n: number): Uint32Array<ArrayBuffer> {
  if (n < ends.length) return ends;
  const more = new Uint32Array(n * 2);
  more.set(ends);
  return more;
}

/**
 * Where each chunk of `text` ends, by rule, in order (the last is text.length; none for empty
 * text): splitChunks's cuts, four bytes a chunk, read in one pass and no string made. The words
 * rule, the default and the one a long echo is cut by, is one loop over the text: a chunk ends
 * where whitespace is followed by anything else (the chunk is a word and the whitespace after
 * it, or the whitespace a text starts with). A call of chunkEnd per chunk, with its branches per
 * character, cost 3 ms of a 960 KB echo's stream, half of what its unary call costs in all.
 */
export function chunkEnds(text: string, rule: Chunking): Uint32Array {
  const length = text.length;
  if (length === 0) return new Uint32Array(0);
  if (rule.kind === "none") return Uint32Array.of(length);
  let ends = new Uint32Array(Math.min(length, 1024));
  let n = 0;
  if (rule.kind === "chars") {
    for (let at = 0; at < length; ) {
      at = chunkEnd(text, rule, at);
      ends = roomy(ends, n);
      ends[n++] = at;
    }
    return ends.subarray(0, n);
  }
  let c = text.charCodeAt(0);
  let space = c < 256 ? latin1Space[c]! : isSpace(c) ? 1 : 0;
  for (let i = 1; i < length; i++) {
    c = text.charCodeAt(i);
    const next = c < 256 ? latin1Space[c]! : isSpace(c) ? 1 : 0;
    if (space > next) {
      ends = roomy(ends, n);
      ends[n++] = i;
    }
    space = next;
  }
  ends = roomy(ends, n);
  ends[n++] = length;
  return ends.subarray(0, n);
}

/**
 * Cuts text into stream chunks by rule (see chunkEnd). The chunks always join back to the text
 * exactly; empty text has none.
 */
export function splitChunks(text: string, rule: Chunking): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const end = chunkEnd(text, rule, at);
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}
