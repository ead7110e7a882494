import { describe, expect, it } from "vitest";
import { indexChunks } from "../../src/shared/index-chunks.js";
import { chunkEnds, type Chunking } from "../../src/shared/split-chunks.js";

/*
 * A long ASCII text cut into words is indexed four characters at a time (issue 27, item 4: a
 * streamed 960 KB echo). These pin the index to chunkEnds, the scanner pinned to the rule.
 */

/** A seeded ASCII text of `length` characters: words of every length, every kind of ASCII whitespace, runs of it. */
function asciiText(length: number, seed: number): string {
  const alphabet = ["a", "b", "Z", "~", "\x1f", "\x7f", "\x08", "\x0e", " ", " ", "  ", "\t", "\n", "\v", "\f", "\r", "word ", "longerword"];
  let out = "";
  while (out.length < length) out += alphabet[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % alphabet.length];
  return out.slice(0, length);
}

const words: Chunking = { kind: "words" };

function expectSameEnds(text: string, order: (count: number) => number[]): void {
  const ends = chunkEnds(text, words);
  const index = indexChunks(text, words);
  expect(index.count).toBe(ends.length);
  for (const k of order(ends.length)) expect(index.endAt(k), `end ${k} of ${ends.length}`).toBe(ends[k]);
}

describe("indexing a long text's chunks", () => {
  it("finds every end of the words rule where chunkEnds does, in order", () => {
    for (const [length, seed] of [
      [16_384, 1],
      [20_001, 2],
      [65_537, 3],
      [100_003, 4],
    ] as const) {
      expectSameEnds(asciiText(length, seed), (count) => Array.from({ length: count }, (_, k) => k));
      // Starting or ending with whitespace, and one long word.
      expectSameEnds(`  ${asciiText(length, seed)}`, (count) => Array.from({ length: count }, (_, k) => k));
      expectSameEnds(`${asciiText(length, seed)}\n \t`, (count) => Array.from({ length: count }, (_, k) => k));
      expectSameEnds("x".repeat(length), () => [0]);
      expectSameEnds(" ".repeat(length), () => [0]);
    }
  });

  it("finds the ends asked out of order, far apart and going back", () => {
    const text = asciiText(300_000, 9);
    expectSameEnds(text, (count) => [0, count - 1, 5, 1000, 999, 60_000, 60_001, 3, count - 2, Math.floor(count / 2)]);
    expectSameEnds(text, (count) => Array.from({ length: 118 }, (_, i) => Math.floor(((i + 1) * count) / 118) - 1));
  });

  it("lists the ends of any other text, as chunkEnds does", () => {
    for (const text of ["", "short words", `é ${asciiText(20_000, 5)}`, `${asciiText(20_000, 6)} \u00a0x \u3000`]) {
      for (const rule of [words, { kind: "none" }, { kind: "chars", n: 3 }] as Chunking[]) {
        const ends = chunkEnds(text, rule);
        const index = indexChunks(text, rule);
        expect(index.count).toBe(ends.length);
        for (let k = 0; k < ends.length; k++) expect(index.endAt(k)).toBe(ends[k]);
      }
    }
  });
});
