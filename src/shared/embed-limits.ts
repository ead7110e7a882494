/*
 * How much one embeddings request may ask for (docs/operations.md, "Limits"), and the size of a
 * vector when it asks for none. Each vector is recorded in the episode, 4 bytes a component: the
 * bound on the numbers keeps one call under 8 MiB of the episode's 64 MiB (--max-episode-bytes).
 */

/** The components of each vector when a request gives no `dimensions` (as text-embedding-3-small). */
export const defaultEmbedDimensions = 1536;

/** The limits of one embeddings request. */
export const embedLimits = {
  /** Texts in `input`: 2,048, as OpenAI's. */
  inputs: 2048,
  /** `dimensions`: 1 to 4,096. */
  dimensions: 4096,
  /** Components of all the vectors together (inputs x dimensions): 2,097,152. */
  numbers: 2_097_152,
} as const;

/** Why a request of `inputs` texts and `dimensions` components is refused, naming its field; undefined within the limits. */
export function embedLimitProblem(inputs: number, dimensions: number): { param: "input" | "dimensions"; message: string } | undefined {
  if (inputs === 0) return { param: "input", message: "input: expected at least one text to embed, got an empty list" };
  if (inputs > embedLimits.inputs)
    return { param: "input", message: `input: ${inputs} texts, over the limit of ${embedLimits.inputs} in a request; send them in several requests` };
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > embedLimits.dimensions) {
    return { param: "dimensions", message: `dimensions: expected a whole number from 1 to ${embedLimits.dimensions}, got ${dimensions}` };
  }
  if (inputs * dimensions > embedLimits.numbers) {
    return {
      param: "input",
      message: `input: ${inputs} texts of ${dimensions} dimensions make ${inputs * dimensions} numbers, over the limit of ${embedLimits.numbers} in a request; send fewer texts per request, or ask for fewer dimensions`,
    };
  }
  return undefined;
}
