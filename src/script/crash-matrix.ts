// Longer than 250 lines because the crash matrix is one definition: its positions (from an
// episode, a script or a spec), each kind's rule, and the plans they make, which the CLI, the
// library and the runner all read.
import { createHash } from "node:crypto";
import { CallMethod, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { stepIdPattern } from "../shared/step-id.js";
import { canonicalJson } from "./compile-fault-plan.js";
import type { CompiledScript } from "./compiled-script.js";
import type { FaultPlanInput, FaultRuleInput } from "./fault-plan-schema.js";

/*
 * The crash matrix (issue 15): single-fault plans, one per call position of a run crossed with
 * failure kinds (or, as an option, every pair of two faults at two positions). Each plan strikes
 * at `{step, occurrence}` and is named by a stable id, so a harness loops over them: load the
 * plan into a fresh session, run the executor with that session, fetch the episode, assert.
 */

/** The failures a matrix crosses positions with. */
export const matrixKinds = ["unavailable", "internal", "resource-exhausted", "timeout", "hang", "break", "drop", "crash"] as const;
export type MatrixKind = (typeof matrixKinds)[number];

/** Kinds that only a streamed call can suffer: they are skipped at positions known to be Generate. */
const streamOnly: ReadonlySet<MatrixKind> = new Set(["break", "drop"]);

/** A call of a run: the `occurrence`-th call with step id `step` ("" for the main list). */
export interface MatrixPosition {
  step: string;
  occurrence: number;
  /** The call's sequence in the episode it came from, when it came from one. */
  call?: number;
  /** The call's method, when known; break and drop apply only to "stream" (or an unknown method). */
  method?: "generate" | "stream";
}

/** One generated plan: its stable id (also the plan's `name`), its name in words, the plan. */
export interface MatrixPlan {
  id: string;
  name: string;
  plan: FaultPlanInput;
}

export interface MatrixOptions {
  positions: readonly MatrixPosition[];
  kinds: readonly MatrixKind[];
  /** Two faults per plan, at every pair of distinct positions, in place of one. */
  pairs?: boolean;
  /**
   * Occurrences count the clean run's calls (`count: clean` on every rule): with pairs, the
   * second fault strikes the call that was at its position in the clean run, not a retry the
   * first fault caused. Changes the plans' digests, so their ids.
   */
  cleanPositions?: boolean;
}

/** One position per recorded call of the episode, in call order. */
export function positionsFromEpisode(episode: Episode): MatrixPosition[] {
  const seen = new Map<string, number>();
  return episode.calls.map((c) => {
    const occurrence = (seen.get(c.stepId) ?? 0) + 1;
    seen.set(c.stepId, occurrence);
    const method = c.method === CallMethod.GENERATE ? "generate" : c.method === CallMethod.GENERATE_STREAM ? "stream" : undefined;
    return { step: c.stepId, occurrence, call: Number(c.sequence), ...(method ? { method } : {}) };
  });
}

/**
 * The calls a script answers: per list (the main list first, then the steps in script order),
 * occurrences 1 to the sum of its entries' uses when all are limited, else one per entry.
 */
export function positionsFromScript(script: CompiledScript): MatrixPosition[] {
  const keys = [...script.lists.keys()].sort((a, b) => (a === "" ? -1 : b === "" ? 1 : 0));
  return keys.flatMap((key) => {
    const entries = script.lists.get(key)!.entries;
    const finite = entries.every((e) => Number.isFinite(e.limit));
    const uses = Math.max(1, finite ? entries.reduce((n, e) => n + e.limit, 0) : entries.length);
    return Array.from({ length: uses }, (_, i) => ({ step: key, occurrence: i + 1 }));
  });
}

/**
 * Parses `plan:1-3,act:2,:1`: comma-separated STEP:N or STEP:N-M (`:N` is the main list; the
 * last colon splits, since step ids may hold one). Throws an Error naming the bad item.
 */
export function parsePositions(text: string): MatrixPosition[] {
  const positions: MatrixPosition[] = [];
  const seen = new Set<string>();
  const items = text.split(",");
  items.forEach((raw, i) => {
    const item = raw.trim();
    const where = `position ${i + 1} of ${items.length} (${JSON.stringify(item)})`;
    if (item === "") throw new Error(`${where} is empty: expected STEP:N or STEP:N-M, like plan:1-3,act:2,:1`);
    const colon = item.lastIndexOf(":");
    if (colon < 0)
      throw new Error(`${where} has no occurrence: expected STEP:N or STEP:N-M (${JSON.stringify(`${item}:1`)} for its first call, ":1" for the main list)`);
    const step = item.slice(0, colon);
    const range = item.slice(colon + 1);
    if (step !== "" && !stepIdPattern.test(step))
      throw new Error(`${where}: ${JSON.stringify(step)} is no step id (1 to 128 characters of A-Z a-z 0-9 . _ : / -; empty for the main list)`);
    const m = /^(\d+)(?:-(\d+))?$/.exec(range);
    if (!m) throw new Error(`${where}: ${JSON.stringify(range)} is no occurrence: expected N or N-M, whole numbers from 1`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to < 1) throw new Error(`${where}: occurrences count from 1, not 0`);
    if (to < from) throw new Error(`${where}: the range ${range} runs backwards: write ${to}-${from}`);
    if (to > 0xffffffff) throw new Error(`${where}: occurrence ${to} is past 4294967295`);
    if (to - from >= 10_000) throw new Error(`${where}: the range ${range} names ${to - from + 1} calls, more than 10000`);
    for (let k = from; k <= to; k++) {
      const key = `${step}:${k}`;
      if (seen.has(key)) throw new Error(`${where}: ${key} is given twice`);
      seen.add(key);
      positions.push({ step, occurrence: k });
    }
  });
  return positions;
}

/** `1st`, `2nd`, `3rd`, `11th`, `22nd`. */
function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

function positionWords(p: MatrixPosition): string {
  return `${p.step === "" ? "main list" : `step ${JSON.stringify(p.step)}`}, ${ordinal(p.occurrence)} call`;
}

const errorCodes = { unavailable: "UNAVAILABLE", internal: "INTERNAL", "resource-exhausted": "RESOURCE_EXHAUSTED" } as const;

function kindWords(kind: MatrixKind): string {
  if (kind in errorCodes) return errorCodes[kind as keyof typeof errorCodes];
  if (kind === "break") return "stream broken after 1 chunk, then UNAVAILABLE";
  if (kind === "drop") return "stream dropped after 1 chunk";
  if (kind === "crash") return "crash (held; the executor is killed and restarted)";
  return kind;
}

/** The rule that applies `kind` at `p`. */
export function matrixRule(p: MatrixPosition, kind: MatrixKind, clean = false): FaultRuleInput {
  // `count: clean`: the occurrence is the clean run's, whatever retries earlier faults caused.
  const at = clean ? { step: p.step, occurrence: p.occurrence, count: "clean" as const } : { step: p.step, occurrence: p.occurrence };
  switch (kind) {
    case "unavailable":
    case "internal":
    case "resource-exhausted":
      return { at, error: { code: errorCodes[kind], message: `crash matrix: ${errorCodes[kind]} at ${positionWords(p)}` } };
    case "timeout":
      return { at, timeout: true };
    case "hang":
    // A crash is a held call: `matrix run` kills the executor once it arrives (WatchSession).
    // eslint-disable-next-line no-fallthrough
    case "crash":
      return { at, hang: true };
    case "break":
      return { at, break: { after_chunks: 1, then: "error" } };
    case "drop":
      return { at, break: { after_chunks: 1, then: "drop" } };
  }
}

/** The kinds that apply at `p`: break and drop only where the method is streaming or unknown. */
function kindsAt(p: MatrixPosition, kinds: readonly MatrixKind[]): MatrixKind[] {
  return p.method === "generate" ? kinds.filter((k) => !streamOnly.has(k)) : [...kinds];
}

function sanitize(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]/g, "_");
}

function planOf(faults: readonly [MatrixPosition, MatrixKind][], clean = false): MatrixPlan {
  const rules = faults.map(([p, k]) => matrixRule(p, k, clean));
  // The digest covers the plan without its name (the name is the id, made from the digest).
  const digest = createHash("sha256")
    .update(canonicalJson({ version: 1, rules }))
    .digest("hex")
    .slice(0, 8);
  const id = `${faults.map(([p, k]) => sanitize(`${p.step === "" ? "main" : p.step}.${p.occurrence}.${k}`)).join("+")}-${digest}`;
  const name = faults.map(([p, k]) => `${positionWords(p)}: ${kindWords(k)}`).join(" + ");
  return { id, name, plan: { version: 1, name: id, rules } };
}

function checkOptions(options: MatrixOptions): void {
  const seen = new Set<string>();
  for (const p of options.positions) {
    const key = `${p.step}:${p.occurrence}`;
    if (seen.has(key)) throw new Error(`the position ${key} is given twice`);
    seen.add(key);
  }
  for (const k of options.kinds)
    if (!matrixKinds.includes(k)) throw new Error(`unknown failure kind ${JSON.stringify(k)}: expected one of ${matrixKinds.join(", ")}`);
}

/**
 * The plans of the matrix, one at a time: one per position and applicable kind (position order,
 * then kind order), or with `pairs` one per two distinct positions i < j and a kind at each.
 * Throws when a position is given twice or a kind is unknown.
 */
export function* eachMatrixPlan(options: MatrixOptions): Generator<MatrixPlan> {
  checkOptions(options);
  const { positions, kinds } = options;
  if (!options.pairs) {
    for (const p of positions) for (const k of kindsAt(p, kinds)) yield planOf([[p, k]], options.cleanPositions === true);
    return;
  }
  const clean = options.cleanPositions === true;
  for (let i = 0; i < positions.length; i++) {
    for (let j = i + 1; j < positions.length; j++) {
      for (const a of kindsAt(positions[i]!, kinds))
        for (const b of kindsAt(positions[j]!, kinds))
          yield planOf(
            [
              [positions[i]!, a],
              [positions[j]!, b],
            ],
            clean,
          );
    }
  }
}

/** Every plan of the matrix, in eachMatrixPlan's order. */
export function matrixPlans(options: MatrixOptions): MatrixPlan[] {
  return [...eachMatrixPlan(options)];
}

/** How many plans matrixPlans(options) makes, counted without making them. */
export function matrixSize(options: MatrixOptions): number {
  const counts = options.positions.map((p) => kindsAt(p, options.kinds).length);
  const sum = counts.reduce((a, b) => a + b, 0);
  if (!options.pairs) return sum;
  return (sum * sum - counts.reduce((a, b) => a + b * b, 0)) / 2;
}

/** The count in words: `24 plans (12 positions x 2 kinds)`, or the pairs' count. */
export function describeMatrixSize(options: MatrixOptions): string {
  const n = options.positions.length;
  const k = options.kinds.length;
  const size = matrixSize(options);
  const plans = `${size} plan${size === 1 ? "" : "s"}`;
  const skipped =
    options.kinds.some((kind) => streamOnly.has(kind)) && options.positions.some((p) => p.method === "generate")
      ? "; break and drop only at streamed calls"
      : "";
  const what = options.pairs
    ? `pairs of ${n} position${n === 1 ? "" : "s"}, ${k} kind${k === 1 ? "" : "s"} each`
    : `${n} position${n === 1 ? "" : "s"} x ${k} kind${k === 1 ? "" : "s"}`;
  return `${plans} (${what}${skipped})`;
}

/** Positions whose step the script has not: a plan there would never strike. One line each. */
export function unknownPositionSteps(positions: readonly MatrixPosition[], script: CompiledScript): string[] {
  const missing = [...new Set(positions.map((p) => p.step).filter((s) => !script.lists.has(s)))];
  const names = [...script.lists.keys()].map((s) => (s === "" ? '"" (the main list)' : s)).join(", ");
  return missing.map((s) => `the script ${JSON.stringify(script.name)} has no ${s === "" ? "main list" : `step ${JSON.stringify(s)}`}: its lists are ${names}`);
}

/**
 * `--positions` picked among an episode's calls (`--from-episode` with `--positions`): each
 * given position takes the episode's call (its sequence and method, so break and drop go only
 * to streamed calls). Throws naming a position the episode has no call for.
 */
export function selectPositions(given: readonly MatrixPosition[], fromEpisode: readonly MatrixPosition[]): MatrixPosition[] {
  const byKey = new Map(fromEpisode.map((p) => [`${p.step}:${p.occurrence}`, p]));
  return given.map((p) => {
    const hit = byKey.get(`${p.step}:${p.occurrence}`);
    if (hit) return hit;
    const calls = fromEpisode.filter((e) => e.step === p.step).length;
    const where = p.step === "" ? "the main list" : `step ${JSON.stringify(p.step)}`;
    throw new Error(`the episode has no call ${p.step}:${p.occurrence}: it made ${calls} call${calls === 1 ? "" : "s"} on ${where}`);
  });
}
