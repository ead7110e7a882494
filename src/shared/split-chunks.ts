/** How to cut text into stream chunks. */
export type Chunking = { kind: "words" } | { kind: "none" } | { kind: "chars"; n: number };

const wordPattern = /\S+\s*|\s+/g;

/**
 * Cuts text into stream chunks by rule. The chunks always join back to the text exactly:
 * `words` keeps each word with the whitespace after it, `chars` counts code points so no chunk
 * splits a surrogate pair, `none` is one chunk.
 */
export function splitChunks(text: string, rule: Chunking): string[] {
  if (text.length === 0) return [];
  switch (rule.kind) {
    case "none":
      return [text];
    case "words":
      return text.match(wordPattern) ?? [text];
    case "chars": {
      const points = Array.from(text);
      const out: string[] = [];
      for (let i = 0; i < points.length; i += rule.n) out.push(points.slice(i, i + rule.n).join(""));
      return out;
    }
  }
}
