import { describe, expect, it } from "vitest";
import { runnerPlans, samplePlans } from "../../src/matrix/matrix-plans.js";
import type { MatrixPosition } from "../../src/index.js";

/*
 * The plans of `matrix run` (issue 30): a pair matrix grows as positions² × kinds², so CI runs a
 * sample of it; the sample must be bounded, the same on every machine, and stable as it grows.
 */

const positions: MatrixPosition[] = [
  { step: "plan", occurrence: 1 },
  { step: "act", occurrence: 1 },
  { step: "act", occurrence: 2 },
  { step: "report", occurrence: 1 },
];
const pairs = { positions, kinds: ["unavailable", "timeout", "crash"] as const, pairs: true, cleanPositions: true };
const ids = (plans: { id: string }[]) => plans.map((p) => p.id);

describe("samplePlans", () => {
  it("keeps N plans of the matrix, in the matrix's order, the same for the same seed", () => {
    const all = runnerPlans(pairs);
    expect(all.length).toBeGreaterThan(50);
    const sample = runnerPlans({ ...pairs, sample: 8, seed: 30 });
    expect(sample).toHaveLength(8);
    expect(ids(sample)).toEqual(ids(all).filter((id) => ids(sample).includes(id)));
    expect(ids(runnerPlans({ ...pairs, sample: 8, seed: 30 }))).toEqual(ids(sample));
  });

  it("picks another sample for another seed, and a larger sample keeps every plan of a smaller one", () => {
    const all = runnerPlans(pairs);
    expect(ids(samplePlans(all, 8, 31))).not.toEqual(ids(samplePlans(all, 8, 30)));
    const twelve = ids(samplePlans(all, 12, 30));
    for (const id of ids(samplePlans(all, 8, 30))) expect(twelve).toContain(id);
  });

  it("keeps every plan when N is not smaller than the matrix", () => {
    const all = runnerPlans({ positions, kinds: ["unavailable"] });
    expect(ids(samplePlans(all, 10))).toEqual(ids(all));
  });
});

describe("chaos plans", () => {
  it("take the given chaos settings with each seed, and name the settings in their ids", () => {
    const chaos = { rates: { error: 0.5, hang: 0.25 }, budget: 1 };
    const plans = runnerPlans({ positions: [], kinds: [], chaosSeeds: { from: 3, to: 4 }, chaos });
    expect(plans.map((p) => p.plan)).toEqual([
      { version: 1, name: plans[0]!.id, chaos: { seed: 3, ...chaos } },
      { version: 1, name: plans[1]!.id, chaos: { seed: 4, ...chaos } },
    ]);
    const byDefault = runnerPlans({ positions: [], kinds: [], chaosSeeds: { from: 3, to: 3 } });
    expect(byDefault[0]!.plan.chaos).toEqual({ seed: 3, rates: { error: 0.1, timeout: 0.1 }, budget: 2 });
    expect(byDefault[0]!.id).not.toBe(plans[0]!.id);
  });
});
