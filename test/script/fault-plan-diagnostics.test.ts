import { describe, expect, it } from "vitest";
import { loadScriptText } from "../../src/script/load-script.js";
import { loadFaultPlanText } from "../../src/script/load-fault-plan.js";
import { ScriptError } from "../../src/index.js";

/** The lines `modelstub validate` would print for a text, or [] when it loads. */
function problems(load: () => unknown): readonly string[] {
  try {
    load();
    return [];
  } catch (err) {
    if (!(err instanceof ScriptError)) throw err;
    return err.lines;
  }
}

const script = "steps:\n  plan: [{ reply: a }]\n  act: [{ reply: b }]\n";

describe("a fault plan file", () => {
  it("loads with its file's name as the plan's name, and a digest of its content", () => {
    const plan = loadFaultPlanText("rules:\n  - at: { step: plan, occurrence: 2 }\n    error: { code: UNAVAILABLE }\n", "plans/plan-twice.yaml");
    expect([plan.name, plan.rules.length, plan.rules[0]!.ref, plan.chaos]).toEqual(["plan-twice", 1, "rules[0]", undefined]);
    expect(plan.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("names the file, line, column, field and a fix for each problem, every problem at once", () => {
    const text = "rules:\n  - at: { call: 1 }\n    eror: { code: UNAVAILABLE }\n  - at: { step: plan }\n    latency: 2 minutes\n";
    const lines = problems(() => loadFaultPlanText(text, "plan.yaml"));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe("plan.yaml:3:5: rules[0]: unknown key `eror` (hint: did you mean `error`?)");
    expect(lines[1]).toMatch(/^plan\.yaml:5:14: rules\[1\]\.latency: /);
  });

  it("refuses a seed past 2^64-1, rates of more than 6 decimals, and an error status a client cannot receive", () => {
    expect(problems(() => loadFaultPlanText('chaos: { seed: "18446744073709551616", rates: { error: 0.1 } }', "p.yaml"))[0]).toContain("larger than 2^64-1");
    expect(problems(() => loadFaultPlanText("chaos: { seed: 1, rates: { error: 0.1234567 } }", "p.yaml"))[0]).toContain("more than 6 decimals");
    expect(
      problems(() => loadFaultPlanText('rules: [{ at: { call: 1 }, error: { code: UNAVAILABLE, trailers: { grpc-status: "0" } } }]', "p.yaml"))[0],
    ).toContain("rules[0].error.trailers");
  });

  it("with a script, refuses steps the script lacks, in rules and in the chaos scope", () => {
    const compiled = loadScriptText(script, "s.yaml");
    const lines = problems(() => loadFaultPlanText("rules: [{ at: { step: akt }, hang: true }]\n", "p.yaml", compiled));
    expect(lines).toEqual([expect.stringMatching(/^p\.yaml:1:\d+: rules\[0\]\.at\.step: the script "s\.yaml" has no step "akt" \(did you mean "act"\?\)/)]);
    const scoped = problems(() => loadFaultPlanText("chaos: { seed: 1, rates: { hang: 0.1 }, scope: { steps: [plan, answer] } }\n", "p.yaml", compiled));
    expect(scoped).toEqual([expect.stringContaining('chaos.scope.steps[1]: the script "s.yaml" has no step "answer"')]);
  });
});

describe("a script's faults: section", () => {
  it("is checked as a plan, at its place in the script", () => {
    const lines = problems(() => loadScriptText(`${script}faults:\n  rules:\n    - at: { step: plna }\n      timeout: true\n`, "s.yaml"));
    expect(lines).toEqual([expect.stringMatching(/^s\.yaml:6:\d+: faults\.rules\[0\]\.at\.step: .*has no step "plna" \(did you mean "plan"\?\)/)]);
  });

  it("compiles into the plan every session of the script starts with", () => {
    const compiled = loadScriptText(`${script}faults:\n  chaos: { seed: 7, rates: { error: 0.5 } }\n`, "s.yaml");
    expect([compiled.faults?.name, compiled.faults?.chaos?.seed, compiled.faults?.chaos?.ppm]).toEqual(["s.yaml", 7n, [500_000, 0, 0, 0, 0]]);
  });
});
