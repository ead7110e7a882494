/**
 * The chaos PRNG: which fault (if any) a call draws, from a seed and the call's coordinates.
 *
 * The schedule is part of the product's contract, not an implementation detail: a Go or Python
 * harness must be able to compute the very same faults without running modelstub. So this is
 * the spec in words, and the code below does exactly this and nothing looser
 * (examples/chaos/chaos_schedule.py is an independent reference; a test makes the two agree):
 *
 * - All arithmetic is on unsigned 64-bit integers, wrapping mod 2^64. GOLDEN = 0x9E3779B97F4A7C15.
 * - mix(z): z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 *   return z ^ (z >> 31).
 * - next(state) (SplitMix64): state = state + GOLDEN; output mix(state).
 * - fnv1a64(bytes) (FNV-1a 64): h = 0xcbf29ce484222325; for each byte b: h = (h ^ b) * 0x100000001b3.
 * - absorb(k, v) = mix((k ^ v) + GOLDEN).
 * - key(seed, session, sequence, step) =
 *   absorb(absorb(absorb(seed, fnv1a64(utf8(session))), sequence), fnv1a64(utf8(step))).
 * - From state = key: d1 = next(state), d2 = next(state) (the second output).
 *   roll = d1 mod 1_000_000; pick = d2 mod (number of errors).
 * - A rate becomes parts per million: ppm = round(rate * 1e6). Kinds in the order of CHAOS_KINDS;
 *   acc = 0; for each kind: acc += ppm[kind]; if roll < acc, that kind. No kind: no fault.
 */

/** The fault kinds, in the order their rates are stacked on the roll (the order is normative). */
export const CHAOS_KINDS = ["error", "timeout", "hang", "break", "latency"] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

// BigInt has no fixed width: every add and multiply is masked back to 64 bits so it wraps
// exactly as a uint64 would in Go or C.
const MASK = 0xffffffffffffffffn;
const GOLDEN = 0x9e3779b97f4a7c15n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
/** The roll's range: rates are whole parts per million, so a roll is one of a million. */
const ROLL_RANGE = 1_000_000n;

/** SplitMix64's finalizer: scrambles a 64-bit value so nearby inputs give unrelated outputs. */
function mix(z: bigint): bigint {
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
  return z ^ (z >> 31n);
}

/** One SplitMix64 step: the new state and its output (state is a value, so the caller threads it). */
export function splitmix64Next(state: bigint): { state: bigint; output: bigint } {
  const next = (state + GOLDEN) & MASK;
  return { state: next, output: mix(next) };
}

/** Folds one 64-bit value into a key (order matters: absorb(absorb(k, a), b) != absorb(absorb(k, b), a)). */
function absorb(key: bigint, value: bigint): bigint {
  return mix(((key ^ value) + GOLDEN) & MASK);
}

/** FNV-1a 64 over the UTF-8 bytes of `text` (bytes, not UTF-16 code units, so other languages agree). */
export function fnv1a64(text: string): bigint {
  let h = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK;
  return h;
}

/** The 64-bit key of one call: the seed, then the session, the call's sequence and its step id. */
export function chaosKey(seed: bigint, session: string, sequence: number, step: string): bigint {
  return absorb(absorb(absorb(seed & MASK, fnv1a64(session)), BigInt(sequence) & MASK), fnv1a64(step));
}

/**
 * A call's two draws: `roll` (0..999999) decides the kind, `pick` (0..errorCount-1) which of the
 * plan's errors the error kind returns. Both are drawn on every call, so a plan's error list never
 * shifts the roll.
 */
export function chaosDraws(seed: bigint, session: string, sequence: number, step: string, errorCount: number): { roll: number; pick: number } {
  if (!Number.isInteger(errorCount) || errorCount < 1) throw new RangeError(`errorCount must be an integer >= 1, got ${errorCount}`);
  const first = splitmix64Next(chaosKey(seed, session, sequence, step));
  const second = splitmix64Next(first.state);
  return { roll: Number(first.output % ROLL_RANGE), pick: Number(second.output % BigInt(errorCount)) };
}

/** A rate (0..1, at most 6 decimals) as whole parts per million, so the kind test is exact integer math. */
export function ratePpm(rate: number): number {
  return Math.round(rate * 1e6);
}

/**
 * The kind a roll lands on: the rates (ppm, in CHAOS_KINDS order) are stacked from 0, and the roll
 * takes the first kind whose running total exceeds it. A roll past the total is no fault.
 */
export function chaosKind(roll: number, ppm: readonly number[]): ChaosKind | undefined {
  let acc = 0;
  for (let i = 0; i < CHAOS_KINDS.length; i++) {
    acc += ppm[i] ?? 0;
    if (roll < acc) return CHAOS_KINDS[i];
  }
  return undefined;
}
