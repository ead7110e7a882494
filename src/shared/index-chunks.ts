import { endianness } from "node:os";
import { chunkEnds, type Chunking } from "./split-chunks.js";

/** Where the chunks of a text end, without a list of them: how many, and where the k-th ends. */
export interface ChunkIndex {
  /** How many chunks the text has (none for empty text). */
  readonly count: number;
  /** Where chunk `k` (0 <= k < count) ends; the last ends at the text's length. Cheapest asked in increasing order. */
  endAt(k: number): number;
}

/** An index over the list of every chunk's end (chunkEnds, or the ends of the script's own chunks). */
export function listedIndex(ends: Uint32Array): ChunkIndex {
  return { count: ends.length, endAt: (k) => ends[k]! };
}

/**
 * How long an ASCII text must be to be indexed by words four bytes at a time rather than listed
 * (below, the copy and the block table cost more than they save).
 */
const minIndexedChars = 16_384;

/** How many 32-bit words of text one entry of the block table covers (256 characters). */
const blockWords = 64;
const blockChars = blockWords * 4;

const littleEndian = endianness() === "LE";

/** ASCII whitespace as the words rule reads it (`\s`: tab, line feed, vertical tab, form feed, carriage return, space). */
function isAsciiSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/**
 * Where the chunks of `text` end, by rule (split-chunks.ts), as an index. A long ASCII text cut
 * into words (a large echo) is read four characters at a time as one 32-bit word of its Latin-1
 * copy: a chunk ends where whitespace is followed by anything else, and the bits that say so
 * are counted per word; the table keeps only the count before every 256 characters, and endAt
 * reads on from there. The words of a 960 KB echo were half its stream's extra cost when every
 * end was found a character at a time and listed (192,000 of them, 768 KB); only the 118 ends of
 * its 59 coalesced frames are ever asked for (plan-frames.ts). Every other text is listed
 * (chunkEnds).
 */
export function indexChunks(text: string, rule: Chunking): ChunkIndex {
  const n = text.length;
  if (rule.kind !== "words" || n < minIndexedChars || !littleEndian || Buffer.byteLength(text) !== n) return listedIndex(chunkEnds(text, rule));
  const words = (n + 3) >>> 2;
  // Padded with spaces: a space after the text's last character is no chunk's end.
  const bytes = Buffer.allocUnsafeSlow(words * 4);
  bytes.write(text, 0, n, "latin1");
  bytes.fill(0x20, n);
  const w = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
  // before[b]: how many ends (before the text's length) lie before character b * blockChars.
  const before = new Uint32Array(Math.ceil(words / blockWords));
  let ends = 0;
  let lastSpace = 0;
  for (let i = 0; i < words; i++) {
    if (i % blockWords === 0) before[i / blockWords] = ends;
    const x = w[i]!;
    // Bit 7 of each byte: whether that character is whitespace. Every byte is below 0x80, so no
    // sum carries into the next byte: a space is a zero byte of x ^ 0x20202020, and 0x09..0x0d
    // is "x + 0x77 reaches 0x80 and x + 0x72 does not".
    const y = x ^ 0x20202020;
    const space = (~(y + 0x7f7f7f7f) | ((x + 0x77777777) & ~(x + 0x72727272))) & 0x80808080;
    // An end: this character is not whitespace and the one before it (in this word, or the last
    // of the word before) is. Character 0 of the text has none before it.
    const end = ((space << 8) | lastSpace) & ~space & 0x80808080;
    ends += Math.imul(end >>> 7, 0x01010101) >>> 24;
    lastSpace = (space >>> 24) & 0x80;
  }
  const count = ends + 1;
  // Where the search for end `next` starts: just after end next - 1 (the last found).
  let next = 0;
  let from = 1;
  return {
    count,
    endAt(k) {
      if (k >= count - 1) return n;
      // The last block that starts with at most k ends before it: read on from there, unless
      // the last end found is already past its start.
      let lo = 0;
      let hi = before.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (before[mid]! <= k) lo = mid;
        else hi = mid - 1;
      }
      if (k < next || lo * blockChars >= from) {
        next = before[lo]!;
        from = Math.max(1, lo * blockChars);
      }
      for (let p = from; ; p++) {
        if (isAsciiSpace(text.charCodeAt(p - 1)) && !isAsciiSpace(text.charCodeAt(p))) {
          if (next++ === k) {
            from = p + 1;
            return p;
          }
        }
      }
    },
  };
}
