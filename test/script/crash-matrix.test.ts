import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CallMethod, EpisodeCallSchema, EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { checkPlanSteps } from "../../src/script/check-plan-steps.js";
import { compileFaultPlan } from "../../src/script/compile-fault-plan.js";
import {
  matrixPlans,
  describeMatrixSize,
  matrixKinds,
  matrixSize,
  parsePositions,
  positionsFromEpisode,
  positionsFromScript,
  unknownPositionSteps,
  type MatrixPlan,
  type MatrixPosition,
} from "../../src/script/crash-matrix.js";
import { FaultPlanSchema } from "../../src/script/fault-plan-schema.js";
import { loadScriptText } from "../../src/script/load-script.js";

/*
 * The crash matrix: positions from an episode, a script or a text, crossed with failure kinds
 * into fault plans that load without a problem, each with an id a harness can keep.
 */

const script = loadScriptText(
  `name: agent
entries:
  - reply: hello
steps:
  plan:
    - reply: first plan
      times: 2
    - reply: second plan
  act:
    - reply: done
      repeat: true
    - reply: never
  "tool:search/v2":
    - reply: found
`,
  "agent.yaml",
);

const call = (sequence: number, stepId: string, method: CallMethod) => create(EpisodeCallSchema, { sequence: BigInt(sequence), stepId, method, session: "s" });
const episode: Episode = create(EpisodeSchema, {
  session: "s",
  calls: [
    call(1, "plan", CallMethod.GENERATE),
    call(2, "act", CallMethod.GENERATE_STREAM),
    call(3, "plan", CallMethod.GENERATE_STREAM),
    call(4, "", CallMethod.GENERATE),
    call(5, "plan", CallMethod.UNSPECIFIED),
  ],
});

/** The problems compiling the plan against the script: the schema's, the compiler's, checkPlanSteps'. */
function problemsOf(p: MatrixPlan): string[] {
  const parsed = FaultPlanSchema.safeParse(p.plan);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  const problems: string[] = [];
  const compiled = compileFaultPlan(parsed.data, [], "fallback", (path, message) => problems.push(`${path.join(".")}: ${message}`));
  problems.push(...checkPlanSteps(compiled, script).map((x) => x.message));
  if (compiled.name !== p.id) problems.push(`the plan is named ${compiled.name}, not ${p.id}`);
  return problems;
}

describe("positionsFromEpisode", () => {
  it("gives one position per recorded call, in order, counting each step's calls, with the call's sequence and method", () => {
    expect(positionsFromEpisode(episode)).toEqual([
      { step: "plan", occurrence: 1, call: 1, method: "generate" },
      { step: "act", occurrence: 1, call: 2, method: "stream" },
      { step: "plan", occurrence: 2, call: 3, method: "stream" },
      { step: "", occurrence: 1, call: 4, method: "generate" },
      { step: "plan", occurrence: 3, call: 5 },
    ]);
  });
});

describe("positionsFromScript", () => {
  it("gives the main list first, then each step in script order: as many calls as limited entries allow, else one per entry", () => {
    expect(positionsFromScript(script).map((p) => `${p.step}:${p.occurrence}`)).toEqual([
      ":1",
      "plan:1",
      "plan:2",
      "plan:3",
      "act:1",
      "act:2",
      "tool:search/v2:1",
    ]);
  });
});

describe("parsePositions", () => {
  it("reads steps with single occurrences and ranges, the main list as an empty step, and step ids holding a colon", () => {
    expect(parsePositions("plan:1-3,act:2,:1,tool:search/v2:1")).toEqual([
      { step: "plan", occurrence: 1 },
      { step: "plan", occurrence: 2 },
      { step: "plan", occurrence: 3 },
      { step: "act", occurrence: 2 },
      { step: "", occurrence: 1 },
      { step: "tool:search/v2", occurrence: 1 },
    ]);
  });

  it.each([
    ["plan", 'position 1 of 1 ("plan") has no occurrence: expected STEP:N or STEP:N-M ("plan:1" for its first call, ":1" for the main list)'],
    ["plan:1,", 'position 2 of 2 ("") is empty: expected STEP:N or STEP:N-M, like plan:1-3,act:2,:1'],
    ["plan:x", 'position 1 of 1 ("plan:x"): "x" is no occurrence: expected N or N-M, whole numbers from 1'],
    ["plan:0", 'position 1 of 1 ("plan:0"): occurrences count from 1, not 0'],
    ["plan:3-1", 'position 1 of 1 ("plan:3-1"): the range 3-1 runs backwards: write 1-3'],
    ["pl an:1", 'position 1 of 1 ("pl an:1"): "pl an" is no step id (1 to 128 characters of A-Z a-z 0-9 . _ : / -; empty for the main list)'],
    ["plan:1-2,plan:2", 'position 2 of 2 ("plan:2"): plan:2 is given twice'],
    ["plan:1-20000", 'position 1 of 1 ("plan:1-20000"): the range 1-20000 names 20000 calls, more than 10000'],
  ])("rejects %j, naming the item and what is wrong", (text, message) => {
    expect(() => parsePositions(text)).toThrow(new Error(message));
  });
});

describe("matrixPlans", () => {
  const positions = positionsFromScript(script);

  it("crosses every position with every kind, in position order then kind order, each plan one rule at {step, occurrence}", () => {
    const plans = matrixPlans({ positions, kinds: ["unavailable", "timeout"] });
    expect(plans).toHaveLength(14);
    expect(plans.map((p) => p.id.replace(/-[0-9a-f]{8}$/, ""))).toEqual(
      positions.flatMap((p) =>
        ["unavailable", "timeout"].map((k) => `${p.step === "" ? "main" : p.step}.${p.occurrence}.${k}`.replace(/[^A-Za-z0-9._-]/g, "_")),
      ),
    );
    expect(plans[2]).toEqual({
      id: expect.stringMatching(/^plan\.1\.unavailable-[0-9a-f]{8}$/),
      name: 'step "plan", 1st call: UNAVAILABLE',
      plan: {
        version: 1,
        name: plans[2]!.id,
        rules: [{ at: { step: "plan", occurrence: 1 }, error: { code: "UNAVAILABLE", message: 'crash matrix: UNAVAILABLE at step "plan", 1st call' } }],
      },
    });
    expect(plans[1]!.name).toBe("main list, 1st call: timeout");
    expect(plans[1]!.plan.rules).toEqual([{ at: { step: "", occurrence: 1 }, timeout: true }]);
  });

  it("maps each kind to its fault", () => {
    const rules = matrixPlans({ positions: [{ step: "act", occurrence: 2 }], kinds: [...matrixKinds] }).map((p) => p.plan.rules![0]!);
    expect(rules.map(({ at: _at, ...fault }) => fault)).toEqual([
      { error: { code: "UNAVAILABLE", message: 'crash matrix: UNAVAILABLE at step "act", 2nd call' } },
      { error: { code: "INTERNAL", message: 'crash matrix: INTERNAL at step "act", 2nd call' } },
      { error: { code: "RESOURCE_EXHAUSTED", message: 'crash matrix: RESOURCE_EXHAUSTED at step "act", 2nd call' } },
      { timeout: true },
      { hang: true },
      { break: { after_chunks: 1, then: "error" } },
      { break: { after_chunks: 1, then: "drop" } },
      { hang: true }, // crash: a held call, which `matrix run` kills the executor at
    ]);
  });

  it("gives the same ids on every run, and different ids to positions whose ids sanitize alike", () => {
    const tricky: MatrixPosition[] = [
      { step: "a:b", occurrence: 1 },
      { step: "a/b", occurrence: 1 },
      { step: "a_b", occurrence: 1 },
      { step: "main", occurrence: 1 },
      { step: "", occurrence: 1 },
    ];
    const once = matrixPlans({ positions: tricky, kinds: [...matrixKinds] }).map((p) => p.id);
    const again = matrixPlans({ positions: tricky, kinds: [...matrixKinds] }).map((p) => p.id);
    expect(again).toEqual(once);
    expect(new Set(once).size).toBe(once.length);
    expect(once.filter((id) => id.startsWith("a_b.1.timeout-"))).toHaveLength(3);
    for (const id of once) expect(id).toMatch(/^[A-Za-z0-9._+-]+$/);
  });

  it("puts break and drop only at streamed calls, or where the method is unknown", () => {
    const plans = matrixPlans({ positions: positionsFromEpisode(episode), kinds: ["break", "drop", "hang"] });
    const struck = (kind: string) => plans.filter((p) => p.id.includes(`.${kind}-`)).map((p) => p.name.split(":")[0]);
    expect(struck("break")).toEqual(['step "act", 1st call', 'step "plan", 2nd call', 'step "plan", 3rd call']);
    expect(struck("drop")).toHaveLength(3);
    expect(struck("hang")).toHaveLength(5);
    expect(matrixSize({ positions: positionsFromEpisode(episode), kinds: ["break", "drop", "hang"] })).toBe(plans.length);
    expect(describeMatrixSize({ positions: positionsFromEpisode(episode), kinds: ["break", "drop", "hang"] })).toBe(
      "11 plans (5 positions x 3 kinds; break and drop only at streamed calls)",
    );
  });

  it("with pairs, makes two-rule plans for every two distinct positions, as many as matrixSize counts first", () => {
    const options = { positions: positionsFromEpisode(episode), kinds: ["unavailable", "break"] as const, pairs: true };
    const plans = matrixPlans({ ...options, kinds: [...options.kinds] });
    expect(plans.length).toBe(matrixSize({ ...options, kinds: [...options.kinds] }));
    // Kinds per position: 1, 2, 2, 1, 2; pairs: (8^2 - (1+4+4+1+4)) / 2 = 25.
    expect(plans.length).toBe(25);
    expect(plans.every((p) => p.plan.rules!.length === 2)).toBe(true);
    expect(plans[0]!.id).toMatch(/^plan\.1\.unavailable\+act\.1\.unavailable-[0-9a-f]{8}$/);
    expect(plans[0]!.name).toBe('step "plan", 1st call: UNAVAILABLE + step "act", 1st call: UNAVAILABLE');
    expect(new Set(plans.map((p) => p.id)).size).toBe(plans.length);
    expect(describeMatrixSize({ positions: positionsFromScript(script), kinds: ["unavailable", "timeout"], pairs: true })).toBe(
      "84 plans (pairs of 7 positions, 2 kinds each)",
    );
  });

  it("makes plans that all compile without a problem against the script, singly and in pairs", () => {
    const kinds = [...matrixKinds];
    const plans = [
      ...matrixPlans({ positions: positionsFromScript(script), kinds }),
      ...matrixPlans({ positions: positionsFromEpisode(episode), kinds, pairs: true }),
    ];
    expect(plans.length).toBeGreaterThan(100);
    expect(plans.flatMap((p) => problemsOf(p).map((m) => `${p.id}: ${m}`))).toEqual([]);
  });

  it("refuses a position given twice and an unknown kind", () => {
    expect(() =>
      matrixPlans({
        positions: [
          { step: "plan", occurrence: 1 },
          { step: "plan", occurrence: 1 },
        ],
        kinds: ["hang"],
      }),
    ).toThrow("the position plan:1 is given twice");
    expect(() => matrixPlans({ positions: [], kinds: ["explode" as never] })).toThrow('unknown failure kind "explode"');
  });
});

describe("unknownPositionSteps", () => {
  it("names each step of the positions the script has not, once", () => {
    expect(unknownPositionSteps(parsePositions("plan:1,plna:1-2,act:1"), script)).toEqual([
      'the script "agent" has no step "plna": its lists are "" (the main list), plan, act, tool:search/v2',
    ]);
  });
});
