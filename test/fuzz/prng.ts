/**
 * The fuzz suite's randomness: seeded and reproducible. `MODELSTUB_FUZZ_SEED` replays a run,
 * `MODELSTUB_FUZZ_ROUNDS` scales every batch (1 is the CI size).
 */

/** The seed used when MODELSTUB_FUZZ_SEED is not set. */
export const defaultSeed = 0x5eed_1212;

/** The run's seed: MODELSTUB_FUZZ_SEED (decimal or 0x hex), else defaultSeed. */
export const fuzzSeed: number = (() => {
  const raw = process.env["MODELSTUB_FUZZ_SEED"];
  if (!raw) return defaultSeed;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`MODELSTUB_FUZZ_SEED must be an integer, got ${JSON.stringify(raw)}`);
  return n >>> 0;
})();

/** The batch size multiplier: MODELSTUB_FUZZ_ROUNDS (a positive number), else 1. */
export const fuzzRounds: number = (() => {
  const raw = process.env["MODELSTUB_FUZZ_ROUNDS"];
  if (!raw) return 1;
  const n = Number(raw);
  if (!(n > 0)) throw new Error(`MODELSTUB_FUZZ_ROUNDS must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
})();

/** `base` cases scaled by MODELSTUB_FUZZ_ROUNDS, at least 1. */
export function scaled(base: number): number {
  return Math.max(1, Math.round(base * fuzzRounds));
}

/** How to replay a case: quoted in every failure message. */
export function replay(batch: string, index: number): string {
  return `${batch} case ${index} (replay: MODELSTUB_FUZZ_SEED=${fuzzSeed} MODELSTUB_FUZZ_ROUNDS=${fuzzRounds})`;
}

/** A seeded generator (mulberry32) with the helpers the batches use. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  bytes(n: number): Buffer;
}

/**
 * A generator for one batch: the run's seed mixed with the batch's name, so each batch draws
 * the same values whatever the others did (a batch replays on its own).
 */
export function createRng(batch: string, seed: number = fuzzSeed): Rng {
  let h = seed >>> 0;
  for (let i = 0; i < batch.length; i++) h = Math.imul(h ^ batch.charCodeAt(i), 0x9e3779b1) >>> 0;
  let a = h;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    range: (lo, hi) => lo + int(hi - lo + 1),
    chance: (p) => next() < p,
    pick: (items) => items[int(items.length)]!,
    bytes: (n) => {
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = int(256);
      return b;
    },
  };
}

/** A random string drawing from ASCII, markers the scripts react to, unicode and lone surrogates. */
export function randomText(rng: Rng, maxLength: number): string {
  const pieces = [
    "PROBE-ECHO ",
    "PROBE-PWD",
    "PROBE-READ a.md ",
    "PROBE-NOCHANGE x ",
    "{{last_user}}",
    "fix ",
    "plan",
    "é",
    "日本",
    "😀",
    "\ud800",
    "\udfff",
    "\u0000",
    "\n",
    "\t",
    " ",
    "\\",
    '"',
    "'",
  ];
  const length = rng.int(maxLength + 1);
  let s = "";
  while (s.length < length) {
    const k = rng.int(4);
    if (k === 0) s += rng.pick(pieces);
    else if (k === 1) s += String.fromCharCode(rng.range(0x20, 0x7e));
    else if (k === 2) s += String.fromCharCode(rng.int(0x10000));
    else s += String.fromCodePoint(rng.int(0x110000));
  }
  return s;
}
