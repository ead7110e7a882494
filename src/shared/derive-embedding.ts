import { createHash } from "node:crypto";

/*
 * The embeddings an input is answered with when the script gives it no vector: derived from its
 * text by the function below, specified in docs/embeddings.md ("The derived vector") so that any
 * language reproduces it bit for bit. Changing it would change every recorded episode's vectors.
 */

/** What every SHA-256 input starts with: the function's name and version, then a NUL. */
export const embeddingDomain = "modelstub.embedding.v1\u0000";

/** Eight uint32 words per SHA-256 digest: components 8b to 8b+7 come from block b. */
const wordsPerBlock = 8;

/**
 * Normalizes `values` to a unit vector of `dimensions` components, as float32: each value divided
 * by the square root of the sum of squares (IEEE doubles, summed in index order), then rounded to
 * float32; components past `values` are zeros. The caller refuses an all-zero vector and one
 * longer than `dimensions`.
 */
export function normalizeVector(values: ArrayLike<number>, dimensions: number): Float32Array {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]! * values[i]!;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(dimensions);
  for (let i = 0; i < values.length; i++) out[i] = values[i]! / norm;
  return out;
}

/**
 * The derived unit vector of `text`, `dimensions` components as float32: block b (from 0) is
 * SHA-256(embeddingDomain || UTF-8(text) || b as uint32 big-endian); component j is the
 * big-endian uint32 u at bytes 4(j mod 8) to 4(j mod 8)+3 of block floor(j / 8), mapped to
 * u / 2^31 - 1 (exact, in [-1, 1)); the whole is then normalized (normalizeVector). A sum of
 * squares of 0 (every u exactly 2^31) gives the first axis, (1, 0, 0, ...).
 */
export function deriveEmbedding(text: string, dimensions: number): Float32Array {
  const prefix = Buffer.concat([Buffer.from(embeddingDomain, "utf8"), Buffer.from(text, "utf8")]);
  const counter = Buffer.alloc(4);
  const raw = new Float64Array(dimensions);
  for (let block = 0; block * wordsPerBlock < dimensions; block++) {
    counter.writeUInt32BE(block, 0);
    const digest = createHash("sha256").update(prefix).update(counter).digest();
    for (let w = 0; w < wordsPerBlock && block * wordsPerBlock + w < dimensions; w++) {
      raw[block * wordsPerBlock + w] = digest.readUInt32BE(4 * w) / 2 ** 31 - 1;
    }
  }
  if (raw.every((x) => x === 0)) {
    const axis = new Float32Array(dimensions);
    axis[0] = 1;
    return axis;
  }
  return normalizeVector(raw, dimensions);
}
