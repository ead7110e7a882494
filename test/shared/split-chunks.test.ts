import { describe, expect, it } from "vitest";
import { chunkEnds, splitChunks, type Chunking } from "../../src/shared/split-chunks.js";

/*
 * The chunking rule is read by hand, in place, since cutting a 1 MiB echo into half a million
 * strings was most of what streaming it cost (issue 27, item 4). These pin the hand-written
 * scanner to the rule as it was written before: `words` is the regular expression
 * `\S+\s*|\s+`, `chars` counts code points as Array.from does.
 */

/** Characters that tell the rule's edges apart: every kind of whitespace `\s` knows, some it does not, surrogates paired and lone. */
const alphabet = [
  "a",
  "Z",
  " ",
  "\t",
  "\n",
  "\v",
  "\f",
  "\r",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u200a",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u3000",
  "\ufeff",
  "\u200b",
  "\u0085",
  "\u180e",
  "é",
  "\ud83d\ude00",
  "\ud83d",
  "\ude00",
];

/** A seeded text of up to `max` characters from the alphabet. */
function texts(count: number, max: number): string[] {
  let seed = 27;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
  return Array.from({ length: count }, () => Array.from({ length: Math.floor(next() * max) }, () => alphabet[Math.floor(next() * alphabet.length)]!).join(""));
}

function byTheRule(text: string, rule: Chunking): string[] {
  if (text === "") return [];
  if (rule.kind === "none") return [text];
  if (rule.kind === "words") return text.match(/\S+\s*|\s+/g)!;
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += rule.n) out.push(points.slice(i, i + rule.n).join(""));
  return out;
}

describe("cutting text into stream chunks", () => {
  const rules: Chunking[] = [{ kind: "words" }, { kind: "none" }, { kind: "chars", n: 1 }, { kind: "chars", n: 3 }];

  it("cuts every text exactly as the rule says", () => {
    for (const text of texts(2000, 40)) {
      for (const rule of rules) expect(splitChunks(text, rule), `${JSON.stringify(text)} by ${JSON.stringify(rule)}`).toEqual(byTheRule(text, rule));
    }
  });

  it("says where each chunk ends without cutting the text", () => {
    for (const text of texts(200, 400)) {
      for (const rule of rules) {
        let at = 0;
        expect(Array.from(chunkEnds(text, rule)), JSON.stringify(text)).toEqual(byTheRule(text, rule).map((c) => (at += c.length)));
      }
    }
  });
});
