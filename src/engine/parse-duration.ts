const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };
const pattern = /^(\d+(?:\.\d+)?)\s*(ms|s|m)$/;

/**
 * Parses a declared duration into whole milliseconds: a number is milliseconds already,
 * a string is `250ms`, `1.5s` or `2m`. Returns undefined for anything else, so the script
 * loader can say what it expected at the right line.
 *
 * Whole milliseconds because the episode records the declared timeline as integers: a
 * fractional remainder would be rounded differently by different readers.
 */
export function parseDuration(value: number | string): number | undefined {
  if (typeof value === "number") {
    return Number.isInteger(value) && value >= 0 ? value : undefined;
  }
  const m = pattern.exec(value.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * units[m[2]!]!;
  return Number.isInteger(ms) ? ms : Math.round(ms);
}
