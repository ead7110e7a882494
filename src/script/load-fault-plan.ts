import { basename, extname } from "node:path";
import { checkPlanSteps } from "./check-plan-steps.js";
import { compileFaultPlan } from "./compile-fault-plan.js";
import type { CompiledFaultPlan, CompiledScript } from "./compiled-script.js";
import { FaultPlanSchema } from "./fault-plan-schema.js";
import { readSourceFile, sortIssues, validateText } from "./load-script.js";
import type { Report } from "./report.js";
import { ScriptError, type ScriptIssue } from "./script-error.js";

/** A plan's name when it gives none: its file's name without the extension ("" for text without a file). */
function nameOfFile(file: string): string {
  return file.startsWith("<") ? "" : basename(file, extname(file));
}

/**
 * Loads a fault plan from YAML or JSON text, with every check and diagnostic a script gets, and
 * throws one ScriptError naming every problem (file, line, column, field, hint). With `script`,
 * it also refuses steps the script does not have: a rule at such a step would never strike.
 */
export function loadFaultPlanText(text: string, file: string, script?: CompiledScript): CompiledFaultPlan {
  try {
    const { input, toIssue } = validateText(text, file, FaultPlanSchema, {
      message: "the fault plan is empty",
      hint: "a fault plan is a mapping with `rules:` (faults at chosen points) or `chaos:` (a seed and rates)",
    });
    const issues: ScriptIssue[] = [];
    const report: Report = (path, message, hint, where) => issues.push(toIssue({ path, message, ...(hint ? { hint } : {}), ...where }));
    const plan = compileFaultPlan(input, [], nameOfFile(file), report);
    if (script && issues.length === 0) for (const p of checkPlanSteps(plan, script)) report(p.path, p.message, p.hint);
    if (issues.length > 0) throw new ScriptError(sortIssues(issues), "fault plan");
    return plan;
  } catch (err) {
    // The shared reader says "script"; a plan's problems say what they are about.
    if (err instanceof ScriptError) throw err.what === "fault plan" ? err : new ScriptError(err.issues, "fault plan");
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new ScriptError([{ file, line: 0, column: 0, path: "", message: `modelstub could not load the fault plan: ${why}`, hint: "this is a bug in modelstub: please report it with the plan" }], "fault plan");
  }
}

/** Loads a fault plan file (YAML or JSON); a missing or unreadable file is a ScriptError too. */
export async function loadFaultPlanFile(path: string, script?: CompiledScript): Promise<CompiledFaultPlan> {
  const text = await readSourceFile(path).catch((err: unknown) => Promise.reject(err instanceof ScriptError ? new ScriptError(err.issues, "fault plan") : err));
  return loadFaultPlanText(text, path, script);
}
