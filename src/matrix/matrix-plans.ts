import { createHash } from "node:crypto";
import { canonicalJson } from "../script/compile-fault-plan.js";
import { eachMatrixPlan, type MatrixKind, type MatrixPosition } from "../script/crash-matrix.js";
import type { FaultPlanInput } from "../script/fault-plan-schema.js";
import type { ReportFault } from "./report-types.js";

/** One plan `matrix run` runs: the plan, its id and words, and what it faults where. */
export interface RunnerPlan {
  id: string;
  name: string;
  /** `clean` (no faults: the reference run), `single`, `pair`, `crash` (a single crash), `chaos`. */
  kind: "clean" | "single" | "pair" | "crash" | "chaos";
  plan: FaultPlanInput;
  faults: ReportFault[];
  /** The rules (`rules[0]`) at which the runner kills COMMAND and starts it again. */
  crashRules: string[];
}

/** Where the plans come from: positions and kinds (as `modelstub matrix`), and chaos seeds. */
export interface RunnerPlanOptions {
  positions: readonly MatrixPosition[];
  kinds: readonly MatrixKind[];
  pairs?: boolean;
  /** Occurrences count the clean run's calls (`count: clean`): see MatrixOptions.cleanPositions. */
  cleanPositions?: boolean;
  /** Chaos plans, one per seed from..to (inclusive), with `chaos`'s other keys. */
  chaosSeeds?: { from: number; to: number };
  /** The chaos section's keys besides the seed (default: errors and timeouts at 10% each, a budget of 2). */
  chaos?: ChaosSettings;
  /** Run only this many of the plans (chaos plans included), picked by `seed`: see samplePlans. */
  sample?: number;
  /** The sample's seed (default 0). */
  seed?: number;
}

/** A chaos section without its seed: what `--chaos-seeds` crosses with each seed. */
export type ChaosSettings = Omit<NonNullable<FaultPlanInput["chaos"]>, "seed">;

/** The plan with no faults every matrix run starts with: the reference for final replies. */
export const cleanPlan: RunnerPlan = {
  id: "clean",
  name: "the clean run (no faults)",
  kind: "clean",
  plan: { version: 1, name: "clean", rules: [] },
  faults: [],
  crashRules: [],
};

/** Parses `A..B` (or `A`) into a seed range; throws an Error naming the problem. */
export function parseSeedRange(text: string): { from: number; to: number } {
  const m = /^(\d+)(?:\.\.(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`expected A..B (like 1..20) or one seed, not ${JSON.stringify(text)}`);
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new Error(`seeds go up to ${Number.MAX_SAFE_INTEGER}`);
  if (to < from) throw new Error(`the range ${text} runs backwards: write ${to}..${from}`);
  if (to - from >= 10_000) throw new Error(`the range ${text} names ${to - from + 1} seeds, more than 10000`);
  return { from, to };
}

/** The chaos of `--chaos-seeds` when neither the caller nor the script's `faults.chaos` gives one. */
export const defaultChaos: ChaosSettings = { rates: { error: 0.1, timeout: 0.1 }, budget: 2 };

/**
 * A bounded, deterministic sample of `plans`: the `n` plans whose SHA-256 of `seed` and their id
 * ranks lowest, in their original order. A plan's rank depends on its id and the seed alone, so
 * the same matrix and seed give the same sample on every machine, and a larger `n` keeps every
 * plan of a smaller one.
 */
export function samplePlans<T extends { id: string }>(plans: readonly T[], n: number, seed = 0): T[] {
  if (n >= plans.length) return [...plans];
  const rank = (id: string) => createHash("sha256").update(`${seed}\0${id}`).digest("hex");
  const kept = new Set(
    plans
      .map((p) => ({ p, r: rank(p.id) }))
      .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
      .slice(0, n)
      .map((x) => x.p),
  );
  return plans.filter((p) => kept.has(p));
}

/**
 * The plans of a matrix run, after the clean run: the crash matrix's plans (kind `crash` plans
 * are single plans the runner kills COMMAND at), then one chaos plan per seed; with `sample`,
 * only that many of them (samplePlans).
 */
export function runnerPlans(options: RunnerPlanOptions): RunnerPlan[] {
  const out: RunnerPlan[] = [];
  if (options.kinds.length > 0 && options.positions.length > 0) {
    for (const m of eachMatrixPlan(options)) {
      const rules = m.plan.rules ?? [];
      const faults: ReportFault[] = rules.map((r) => ({
        kind: kindOfRule(m.id, rules.indexOf(r)),
        position: { step: r.at.step ?? "", occurrence: r.at.occurrence ?? 1 },
      }));
      const crashRules = faults.flatMap((f, i) => (f.kind === "crash" ? [`rules[${i}]`] : []));
      const kind = faults.length > 1 ? "pair" : crashRules.length > 0 ? "crash" : "single";
      out.push({ id: m.id, name: m.name, kind, plan: m.plan, faults, crashRules });
    }
  }
  if (options.chaosSeeds) {
    const rest = options.chaos ?? defaultChaos;
    for (let seed = options.chaosSeeds.from; seed <= options.chaosSeeds.to; seed++) {
      const body = { version: 1 as const, chaos: { seed, ...rest } };
      const digest = createHash("sha256").update(canonicalJson(body)).digest("hex").slice(0, 8);
      const id = `chaos.${seed}-${digest}`;
      out.push({ id, name: `chaos, seed ${seed}`, kind: "chaos", plan: { ...body, name: id }, faults: [{ kind: "chaos" }], crashRules: [] });
    }
  }
  return options.sample === undefined ? out : samplePlans(out, options.sample, options.seed);
}

/** The kind of rule `i` of a matrix plan, read back from its id (`plan.2.unavailable+act.1.crash-1a2b3c4d`). */
function kindOfRule(id: string, i: number): string {
  const parts = id.replace(/-[0-9a-f]{8}$/, "").split("+");
  const part = parts[i] ?? "";
  return part.slice(part.lastIndexOf(".") + 1);
}
