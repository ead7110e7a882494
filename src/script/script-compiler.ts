import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { checkPlanSteps } from "./check-plan-steps.js";
import { compileFaultPlanInSteps } from "./compile-fault-plan.js";
import { compileScriptInSteps } from "./compile-script.js";
import type { CompileAnswer, CompileJob } from "./compile-worker.js";
import type { CompiledFaultPlan, CompiledScript } from "./compiled-script.js";
import type { FaultPlanInput } from "./fault-plan-schema.js";
import { faultPlanNameOf } from "./fault-plan-name.js";
import { readSourceFile } from "./read-source-file.js";
import { ScriptError, type ScriptIssue } from "./script-error.js";
import { compileHeapMb, compileTimeBudgetMs, maxCompilesWaiting } from "./script-limits.js";
import type { ScriptInput } from "./script-schema.js";

/*
 * Scripts and fault plans a serving process receives are checked in a worker thread with a heap
 * limit and a time budget: a text that would take seconds or hundreds of MB ends that worker and
 * is refused, and the serving loop goes on. The worker answers the validated input; compiling it
 * again here takes a few ms (15 to 30 for a 512 KiB script) and cannot fail once the worker
 * passed it. One worker serves the whole process, one text at a time, started on first use
 * (about 100 ms, loading yaml and zod) and ended when its last holder lets it go.
 */

/** Checks and compiles texts off the serving loop; `release` once done with it. */
export interface ScriptCompiler {
  script(text: string, file: string): Promise<CompiledScript>;
  /**
   * With `script`, refuses steps it lacks, as loadFaultPlanText does. A function is asked before
   * and after the worker runs: a session's script may change meanwhile.
   */
  faultPlan(text: string, file: string, script?: CompiledScript | (() => CompiledScript | undefined)): Promise<CompiledFaultPlan>;
  release(): void;
}

/** The budgets a compile runs under (script-limits.ts); tests shrink them. */
export const compileBudget = { timeMs: compileTimeBudgetMs, heapMb: compileHeapMb };

interface Pending {
  job: CompileJob;
  resolve: (input: ScriptInput | FaultPlanInput) => void;
  reject: (err: ScriptError) => void;
}

let holders = 0;
let worker: Worker | undefined;
/** The heap budget the worker was started with: a changed budget takes a new worker. */
let workerHeapMb = 0;
let running: (Pending & { timer: NodeJS.Timeout }) | undefined;
const waiting: Pending[] = [];
let nextId = 1;

/**
 * The worker's file beside this module: dist/src/script/compile-worker.js from tsc, or
 * dist/bundle/compile-worker.mjs beside the bundle's chunk; run from the TypeScript sources (the
 * tests), the built one.
 */
function workerFile(): URL {
  const candidates = ["./compile-worker.js", "./compile-worker.mjs", "../../dist/src/script/compile-worker.js"].map((f) => new URL(f, import.meta.url));
  const found = candidates.find((u) => existsSync(fileURLToPath(u)));
  if (!found) throw new Error(`the compile worker is missing (looked for ${candidates.map((u) => fileURLToPath(u)).join(", ")}): is modelstub built?`);
  return found;
}

const refusal = (job: CompileJob, message: string, hint: string): ScriptError =>
  new ScriptError([{ file: job.file, line: 0, column: 0, path: "", message, hint }], job.kind === "script" ? "script" : "fault plan", true);

/** Settles the running job and starts the next; an ended worker is replaced on the next job. */
function finish(settle: (p: Pending) => void): void {
  const done = running;
  if (!done) return;
  running = undefined;
  clearTimeout(done.timer);
  settle(done);
  runNext();
}

function stopWorker(): void {
  const w = worker;
  worker = undefined;
  if (w) {
    w.removeAllListeners();
    // An error while it stops (it may already be out of memory) concerns nobody now.
    w.on("error", () => undefined);
    void w.terminate();
  }
}

function startWorker(): Worker {
  const w = new Worker(workerFile(), {
    resourceLimits: { maxOldGenerationSizeMb: compileBudget.heapMb, stackSizeMb: 4 },
    // The worker logs nothing; its stdio must not hold the process either.
    stdout: false,
    stderr: false,
  });
  w.on("message", (answer: CompileAnswer) => {
    if (!running || answer.id !== running.job.id) return;
    finish((p) => ("input" in answer ? p.resolve(answer.input) : p.reject(new ScriptError(answer.issues, answer.what))));
  });
  w.on("error", (err: Error & { code?: string }) => {
    stopWorker();
    const heap = err.code === "ERR_WORKER_OUT_OF_MEMORY";
    finish((p) =>
      p.reject(
        heap
          ? refusal(p.job, `checking the ${p.job.kind === "script" ? "script" : "fault plan"} needed more than ${compileBudget.heapMb} MiB of memory (its budget), so it was refused`, "simplify it: fewer and shorter values, fewer aliases; every other session went on")
          : refusal(p.job, `modelstub could not check the ${p.job.kind === "script" ? "script" : "fault plan"}: ${err.message}`, "this is a bug in modelstub: please report it with the text"),
      ),
    );
  });
  w.on("exit", (code) => {
    if (worker !== w) return;
    worker = undefined;
    finish((p) => p.reject(refusal(p.job, `the worker checking the ${p.job.kind === "script" ? "script" : "fault plan"} stopped (exit code ${code})`, "this is a bug in modelstub: please report it with the text")));
  });
  return w;
}

function runNext(): void {
  if (running) return;
  const next = waiting.shift();
  if (!next) {
    if (holders === 0) stopWorker();
    // Idle, it holds no process open.
    else worker?.unref();
    return;
  }
  if (worker && workerHeapMb !== compileBudget.heapMb) stopWorker();
  let w: Worker;
  try {
    workerHeapMb = compileBudget.heapMb;
    w = worker ??= startWorker();
  } catch (err) {
    next.reject(refusal(next.job, `modelstub could not check the text: ${(err as Error).message}`, "reinstall or rebuild modelstub"));
    return runNext();
  }
  w.ref();
  const timer = setTimeout(() => {
    stopWorker();
    const what = next.job.kind === "script" ? "script" : "fault plan";
    finish((p) => p.reject(refusal(p.job, `checking the ${what} took longer than ${compileBudget.timeMs / 1000} s (its budget), so it was refused`, `simplify it or split it into smaller ${what}s; every other session went on`)));
  }, compileBudget.timeMs);
  running = { ...next, timer };
  w.postMessage(next.job);
}

function submit(job: CompileJob): Promise<ScriptInput | FaultPlanInput> {
  return new Promise((resolve, reject) => {
    if (waiting.length >= maxCompilesWaiting) {
      reject(refusal(job, `${maxCompilesWaiting} scripts and fault plans are already waiting to be checked, so this one was refused`, "load fewer at once, or wait for the others"));
      return;
    }
    waiting.push({ job, resolve, reject });
    runNext();
  });
}

/** A problem the worker did not find but compiling here did: it cannot happen, so it says it is a bug. */
function reporting(file: string, what: "script" | "fault plan"): { report: (path: (string | number)[], message: string) => void; check: () => void } {
  const issues: ScriptIssue[] = [];
  return {
    report: (path, message) => issues.push({ file, line: 0, column: 0, path: path.join("."), message, hint: "this is a bug in modelstub: please report it with the text" }),
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
  holders++;
  let held = true;
  return {
    async script(text, file) {
      const input = (await submit({ id: nextId++, kind: "script", text, file })) as ScriptInput;
      return compileCheckedScript(input, file);
    },
    async faultPlan(text, file, script) {
      const scriptNow = typeof script === "function" ? script : () => script;
      const before = scriptNow();
      const steps = before && { name: before.name, steps: [...before.lists.keys()] };
      const input = (await submit({ id: nextId++, kind: "plan", text, file, ...(steps ? { script: steps } : {}) })) as FaultPlanInput;
      return compileCheckedFaultPlan(input, file, scriptNow);
    },
    release() {
      if (!held) return;
      held = false;
      if (--holders === 0 && !running) stopWorker();
    },
  };
}

/** Runs `use` holding the worker, for one check (a CLI check, `serve --script`, a handler with no server's compiler). */
async function holding<T>(use: (compiler: ScriptCompiler) => Promise<T>): Promise<T> {
  const compiler = holdScriptCompiler();
  try {
    return await use(compiler);
  } finally {
    compiler.release();
  }
}

/** A compiler that holds the worker for each call only: nothing to release. */
export const compilerPerCall: ScriptCompiler = {
  script: (text, file) => holding((c) => c.script(text, file)),
  faultPlan: (text, file, script) => holding((c) => c.faultPlan(text, file, script)),
  release: () => undefined,
};

/** Reads a script file (bounded, as loadScriptFile does) and compiles it in the worker: `serve --script`, `validate`. */
export async function compileScriptFile(path: string): Promise<CompiledScript> {
  return compilerPerCall.script(await readSourceFile(path), path);
}

/** Reads a fault plan file and compiles it in the worker: `session faults`, `validate`'s plan check. */
export async function compileFaultPlanFile(path: string): Promise<CompiledFaultPlan> {
  const text = await readSourceFile(path).catch((err: unknown) => Promise.reject(err instanceof ScriptError ? new ScriptError(err.issues, "fault plan") : err));
  return compilerPerCall.faultPlan(text, path);
}
