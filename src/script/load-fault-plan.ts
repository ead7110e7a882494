import { checkPlanSteps, type ScriptSteps } from "./check-plan-steps.js";
import { compileFaultPlan } from "./compile-fault-plan.js";
import { faultPlanNameOf } from "./fault-plan-name.js";
import type { CompiledFaultPlan } from "./compiled-script.js";
import { FaultPlanSchema, type FaultPlanInput } from "./fault-plan-schema.js";
import { collectingReport, onlyScriptErrors, readSourceFile, sortIssues, validateText } from "./load-script.js";
import { ScriptError, type ScriptIssue } from "./script-error.js";

/**
 * Loads a fault plan from YAML or JSON text, with every check and diagnostic a script gets, and
 * throws one ScriptError naming every problem (file, line, column, field, hint). With `script`,
 * it also refuses steps the script does not have: a rule at such a step would never strike.
 */
export function loadFaultPlanText(text: string, file: string, script?: ScriptSteps): CompiledFaultPlan {
  return onlyScriptErrors(file, "fault plan", () => loadFaultPlan(text, file, script).plan);
}

/**
 * Checks a fault plan text as loadFaultPlanText does, and answers the validated input it
 * compiled (plain data, for a worker to send back; see checkScriptText).
 */
export function checkFaultPlanText(text: string, file: string, script?: ScriptSteps): FaultPlanInput {
  return onlyScriptErrors(file, "fault plan", () => loadFaultPlan(text, file, script).input);
}

function loadFaultPlan(text: string, file: string, script: ScriptSteps | undefined): { plan: CompiledFaultPlan; input: FaultPlanInput } {
  const { input, toIssue, refused } = validateText(text, file, FaultPlanSchema, {
    message: "the fault plan is empty",
    hint: "a fault plan is a mapping with `rules:` (faults at chosen points) or `chaos:` (a seed and rates)",
  });
  const issues: ScriptIssue[] = [...(refused?.issues ?? [])];
  const report = collectingReport(issues, toIssue, refused);
  const plan = compileFaultPlan(input, [], faultPlanNameOf(file), report);
  if (script && issues.length === 0) for (const p of checkPlanSteps(plan, script)) report(p.path, p.message, p.hint);
  if (issues.length > 0) throw new ScriptError(sortIssues(issues), "fault plan");
  return { plan, input };
}

/**
 * Reads and compiles a fault plan file (YAML, or strict JSON when named .json); rejects with a
 * ScriptError, a missing or unreadable file included. Part of the package's surface (index.ts).
 */
export async function loadFaultPlanFile(path: string): Promise<CompiledFaultPlan> {
  const text = await readSourceFile(path).catch((err: unknown) => Promise.reject(err instanceof ScriptError ? new ScriptError(err.issues, "fault plan") : err));
  return loadFaultPlanText(text, path);
}
