import { dirname } from "node:path";
import { checkPlanSteps } from "./check-plan-steps.js";
import { compileFaultPlanInSteps } from "./compile-fault-plan.js";
import { compileScriptInSteps } from "./compile-script.js";
import { holdWorker, releaseWorker, submit } from "./compile-in-worker.js";
import type { CompiledFaultPlan, CompiledScript } from "./compiled-script.js";
import type { FaultPlanInput } from "./fault-plan-schema.js";
import { faultPlanNameOf } from "./fault-plan-name.js";
import { readSourceFile } from "./read-source-file.js";
import { ScriptError, type ScriptIssue } from "./script-error.js";
import type { ScriptInput } from "./script-schema.js";

export { compileBudget } from "./compile-in-worker.js";

/*
 * Scripts and fault plans a serving process receives are checked in a worker thread with a heap
 * limit and a time budget (compile-in-worker.ts): a text that would take seconds or hundreds of
 * MB ends that worker and is refused, and the serving loop goes on. The worker answers the
 * validated input, which this thread compiles again, a few entries at a time: it cannot fail
 * once the worker passed it (a 512 KiB script of 1,565 regex entries: 100 to 200 ms in all, in
 * slices of about 5 ms). One worker serves the whole process, started on first use (0.2 to 0.5 s,
 * loading yaml and zod) and ended when its last holder lets it go.
 */

/** Checks and compiles texts off the serving loop; `release` once done with it. */
export interface ScriptCompiler {
  /** `textFilesFrom`: the folder a script file's `text_file`s are read from; a script given as text has none. */
  script(text: string, file: string, textFilesFrom?: string): Promise<CompiledScript>;
  /**
   * With `script`, refuses steps it lacks, as loadFaultPlanText does. A function is asked before
   * and after the worker runs: a session's script may change meanwhile.
   */
  faultPlan(text: string, file: string, script?: CompiledScript | (() => CompiledScript | undefined)): Promise<CompiledFaultPlan>;
  /** Resolves once the worker, if this was its last holder, has ended. */
  release(): Promise<void>;
}

/** A problem the worker did not find but compiling here did: it cannot happen, so it says it is a bug. */
function reporting(file: string, what: "script" | "fault plan"): { report: (path: (string | number)[], message: string) => void; check: () => void } {
  const issues: ScriptIssue[] = [];
  return {
    report: (path, message) =>
      issues.push({ file, line: 0, column: 0, path: path.join("."), message, hint: "this is a bug in modelstub: please report it with the text" }),
    check: () => {
      if (issues.length > 0) throw new ScriptError(issues, what);
    },
  };
}

/** How long the serving thread compiles at a time before it lets other work run. */
const sliceMs = 5;

/** Runs `steps` to its end, letting the loop turn whenever a slice of sliceMs is used up. */
async function inSlices<T>(steps: Generator<void, T>): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart > sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/**
 * The script the worker validated, compiled here, a few entries at a time: the same script
 * loadScriptText returns.
 */
export async function compileCheckedScript(input: ScriptInput, file: string): Promise<CompiledScript> {
  const { report, check } = reporting(file, "script");
  const script = await inSlices(compileScriptInSteps(input, file, report));
  check();
  return script;
}

/** The fault plan the worker validated, compiled here a few rules at a time, its steps checked against `script` as it is then. */
export async function compileCheckedFaultPlan(input: FaultPlanInput, file: string, script?: () => CompiledScript | undefined): Promise<CompiledFaultPlan> {
  const { report, check } = reporting(file, "fault plan");
  const plan = await inSlices(compileFaultPlanInSteps(input, [], faultPlanNameOf(file), report));
  const scriptNow = script?.();
  // Checked again: the session's script may have changed while the worker ran.
  if (scriptNow) for (const p of checkPlanSteps(plan, scriptNow)) report(p.path, p.message);
  check();
  return plan;
}

/** Holds the process's compile worker (started on first use) until `release`. */
export function holdScriptCompiler(): ScriptCompiler {
  holdWorker();
  let held = true;
  return {
    async script(text, file, textFilesFrom) {
      const input = (await submit({ kind: "script", text, file, ...(textFilesFrom !== undefined ? { textFilesFrom } : {}) })) as ScriptInput;
      return compileCheckedScript(input, file);
    },
    async faultPlan(text, file, script) {
      const scriptNow = typeof script === "function" ? script : () => script;
      const before = scriptNow();
      const steps = before && { name: before.name, steps: [...before.lists.keys()] };
      const input = (await submit({ kind: "plan", text, file, ...(steps ? { script: steps } : {}) })) as FaultPlanInput;
      return compileCheckedFaultPlan(input, file, scriptNow);
    },
    release() {
      if (!held) return Promise.resolve();
      held = false;
      return releaseWorker();
    },
  };
}

/** Runs `use` holding the worker, for one check (a CLI check, `serve --script`, a handler with no server's compiler). */
async function holding<T>(use: (compiler: ScriptCompiler) => Promise<T>): Promise<T> {
  const compiler = holdScriptCompiler();
  try {
    return await use(compiler);
  } finally {
    await compiler.release();
  }
}

/** A compiler that holds the worker for each call only: nothing to release. */
export const compilerPerCall: ScriptCompiler = {
  script: (text, file, textFilesFrom) => holding((c) => c.script(text, file, textFilesFrom)),
  faultPlan: (text, file, script) => holding((c) => c.faultPlan(text, file, script)),
  release: () => Promise.resolve(),
};

/** Reads a script file (bounded, as loadScriptFile does) and compiles it in the worker: `serve --script`, `validate`. */
export async function compileScriptFile(path: string): Promise<CompiledScript> {
  return compilerPerCall.script(await readSourceFile(path), path, dirname(path));
}

/** Reads a fault plan file and compiles it in the worker: `session faults`, `validate`'s plan check. */
export async function compileFaultPlanFile(path: string): Promise<CompiledFaultPlan> {
  const text = await readSourceFile(path).catch((err: unknown) => Promise.reject(err instanceof ScriptError ? new ScriptError(err.issues, "fault plan") : err));
  return compilerPerCall.faultPlan(text, path);
}
