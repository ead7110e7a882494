const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/**
 * The longest declared wait: 24 days (2,073,600,000 ms, `34560m`). Node's timers cannot wait
 * longer than 2^31-1 ms (about 24.8 days): a longer setTimeout fires after 1 ms, so a longer
 * latency would quietly become no latency on the real clock. The loader refuses it instead.
 */
export const maxDurationMs = 24 * 24 * 60 * 60 * 1000;
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
