import type { z } from "zod";
import type { CompiledFaultPlan, CompiledScript } from "../script/compiled-script.js";
import type { FaultPlanSchema } from "../script/fault-plan-schema.js";
import { checkPlanSteps } from "../script/check-plan-steps.js";
import { loadFaultPlanText } from "../script/load-fault-plan.js";
import { ScriptError } from "../script/script-error.js";
import { compilerPerCall } from "../script/script-compiler.js";
import { jsonTextOf } from "./script-source.js";

/** A fault plan written as an object, with the same keys as the YAML (`rules`, `chaos`, ...). */
export type FaultPlanObject = z.input<typeof FaultPlanSchema>;

/** A fault plan: YAML or JSON text, a plan object, or a plan loadFaultPlan() already compiled. */
export type FaultPlanSource = string | FaultPlanObject | CompiledFaultPlan;

function isCompiledPlan(source: FaultPlanSource): source is CompiledFaultPlan {
  return (
    typeof source === "object" &&
    source !== null &&
    typeof (source as Partial<CompiledFaultPlan>).digest === "string" &&
    Array.isArray((source as CompiledFaultPlan).rules)
  );
}

/**
 * Compiles any FaultPlanSource through the plan loader (an object as indented JSON text, so its
 * diagnostics point at lines of `JSON.stringify(plan, null, 2)`); with `script`, refuses steps
 * the script lacks. Throws ScriptError and nothing else.
 */
export function compilePlanSource(source: FaultPlanSource, file: string, script?: CompiledScript): CompiledFaultPlan {
  if (typeof source === "string") return loadFaultPlanText(source, file, script);
  if (isCompiledPlan(source)) {
    const problems = script ? checkPlanSteps(source, script) : [];
    if (problems.length > 0)
      throw new ScriptError(
        problems.map((p) => ({ file, line: 0, column: 0, path: p.path.join("."), message: p.message, hint: p.hint })),
        "fault plan",
      );
    return source;
  }
  return loadFaultPlanText(jsonTextOf(source, file, "fault plan"), file, script);
}

/**
 * Compiles any FaultPlanSource as compilePlanSource does, but a text or an object in the compile
 * worker (script-compiler.ts); `script` is asked before and after (the session's may change).
 */
export async function compilePlanSourceOffLoop(source: FaultPlanSource, file: string, script: () => CompiledScript | undefined): Promise<CompiledFaultPlan> {
  if (typeof source === "string") return compilerPerCall.faultPlan(source, file, script);
  if (isCompiledPlan(source)) return compilePlanSource(source, file, script());
  return compilerPerCall.faultPlan(jsonTextOf(source, file, "fault plan"), file, script);
}

/**
 * Compiles a fault plan from YAML or JSON text, or a plan object, as `modelstub session faults`
 * does: pass the result to control.setFaultPlan() (for many sessions: compile once). Throws a
 * ScriptError naming every problem (file, line, column, field, hint).
 * @param file the name diagnostics give the plan, and the plan's name when it has no `name:`
 */
export function loadFaultPlan(source: string | FaultPlanObject, file = typeof source === "string" ? "<fault plan>" : "<fault plan object>"): CompiledFaultPlan {
  return compilePlanSource(source, file);
}
