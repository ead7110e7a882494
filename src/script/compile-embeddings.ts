import { quoteClipped } from "../shared/clip-text.js";
import { normalizeVector } from "../shared/derive-embedding.js";
import type { CompiledEmbedding } from "./compiled-script.js";
import type { Report } from "./report.js";
import type { EmbeddingInput } from "./script-schema.js";

/**
 * A script's `embeddings:` by input text, each vector normalized once, here. Refused at their
 * paths: an input given twice (the second could never answer), and a vector with no direction
 * (all zeros) or whose squares sum to 0 or past the largest double, which cannot be normalized.
 */
export function compileEmbeddings(input: readonly EmbeddingInput[], report: Report): Map<string, CompiledEmbedding> {
  const out = new Map<string, CompiledEmbedding>();
  const first = new Map<string, number>();
  input.forEach((e, i) => {
    const ref = `embeddings[${i}]`;
    const seen = first.get(e.input);
    if (seen !== undefined) {
      report(
        ["embeddings", i, "input"],
        `the input ${quoteClipped(e.input)} has a vector already: embeddings[${seen}] answers it, so ${ref} never would`,
        `remove one of embeddings[${seen}] and ${ref}`,
      );
      return;
    }
    first.set(e.input, i);
    let sum = 0;
    for (const x of e.vector) sum += x * x;
    if (e.vector.every((x) => x === 0)) {
      report(
        ["embeddings", i, "vector"],
        "the vector is all zeros: it has no direction, and cannot be made a unit vector",
        "give at least one component that is not 0, like [1, 0, 0]",
      );
      return;
    }
    if (sum === 0 || !Number.isFinite(sum)) {
      report(
        ["embeddings", i, "vector"],
        `the vector's squares sum to ${sum === 0 ? "0 in doubles (its components are too small)" : "more than the largest double"}: it cannot be normalized`,
        "scale its components to between -1 and 1; only the direction counts",
      );
      return;
    }
    out.set(e.input, { ref, vector: normalizeVector(e.vector, e.vector.length) });
  });
  return out;
}
