// Small statistics helpers.

/** Nearest-rank percentile of an ascending-sorted array-like. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Summary of latencies in ms: count, min, mean, p50, p90, p99, p999, max. */
export function summarize(values) {
  const s = Float64Array.from(values).sort();
  if (s.length === 0) return { count: 0 };
  let sum = 0;
  for (const v of s) sum += v;
  return {
    count: s.length,
    min: s[0],
    mean: sum / s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    p999: percentile(s, 99.9),
    max: s[s.length - 1],
  };
}

export function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export const round = (x, d = 2) => (typeof x === "number" && Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);
export const ratio = (a, b) => (typeof a === "number" && typeof b === "number" && b !== 0 ? a / b : null);
