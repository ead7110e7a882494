import { nearestName } from "../shared/nearest-name.js";
import type { CompiledFaultPlan } from "./compiled-script.js";

/** What a plan's steps are checked against: a compiled script, or its name and step names (all a worker needs). */
export interface ScriptSteps {
  name: string;
  lists: { has(step: string): boolean; keys(): Iterable<string> };
}

/**
 * The problems of a plan whose rules or chaos scope name steps the script does not have: such a
 * rule would never strike, and a crash test built on it would pass without testing anything.
 * Each problem is a path under the plan (`rules[2].at.step`) and a message with the nearest name.
 */
export function checkPlanSteps(plan: CompiledFaultPlan, script: ScriptSteps): { path: (string | number)[]; message: string; hint: string }[] {
  const steps = [...script.lists.keys()];
  const known = (step: string) => script.lists.has(step);
  const problem = (path: (string | number)[], step: string) => {
    const near = nearestName(
      step,
      steps.filter((s) => s !== ""),
    );
    const names = steps.map((s) => (s === "" ? '"" (the main list)' : s)).join(", ");
    return {
      path,
      message: `the script ${JSON.stringify(script.name)} has no step ${JSON.stringify(step)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ""}, so this would never strike`,
      hint: `use one of its steps: ${names}`,
    };
  };
  const problems: { path: (string | number)[]; message: string; hint: string }[] = [];
  for (const rule of plan.rules) {
    if (rule.at.kind === "step" && !known(rule.at.step)) problems.push(problem(["rules", rule.index, "at", "step"], rule.at.step));
  }
  [...(plan.chaos?.steps ?? [])].forEach((step, i) => {
    if (!known(step)) problems.push(problem(["chaos", "scope", "steps", i], step));
  });
  return problems;
}
