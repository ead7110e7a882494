import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { CompileAnswer, CompileJob } from "./compile-worker.js";
import type { FaultPlanInput } from "./fault-plan-schema.js";
import { ScriptError } from "./script-error.js";
import { compileHeapMb, compileTimeBudgetMs, maxCompilesWaiting } from "./script-limits.js";
import type { ScriptInput } from "./script-schema.js";
import { currentThreadId, threadCpuMs } from "./thread-cpu-time.js";

/*
 * The process's one compile worker (compile-worker.ts) and its queue: a text at a time, under a
 * time budget (a timer here ends the worker) and a heap budget (V8's resource limit ends it).
 * The time budget is the worker thread's CPU time where Linux reports it (thread-cpu-time.ts),
 * so a loaded machine refuses what a quiet one accepts only past a wall-clock cap many times the
 * budget; elsewhere it is wall time.
 * Started on the first text; ended once no holder needs it (holdWorker, releaseWorker). Idle, it
 * is unref'd: a forgotten holder keeps no process alive.
 */

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
/** The worker thread's id, once it said (compile-worker.ts): its CPU time is what the budget counts. */
let workerThreadId: number | undefined;
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

/** Ends the worker, if any; resolves once its thread is gone. */
function stopWorker(): Promise<void> {
  const w = worker;
  worker = undefined;
  workerThreadId = undefined;
  if (w) {
    w.removeAllListeners();
    // An error while it stops (it may already be out of memory) concerns nobody now.
    w.on("error", () => undefined);
    return w.terminate().then(() => undefined);
  }
  return Promise.resolve();
}

function startWorker(): Worker {
  // Node's default stack (4 MiB) holds the 64 levels a text may nest; the heap is the budget.
  // The worker inherits the process's Node options, but `--input-type` (a program given as
  // `node --input-type=module -e ...`) makes Node refuse to start a worker from a file: then, and
  // only then, the options are given without it (given explicitly, they are checked as a
  // worker's, and process-wide ones like --expose-gc would be refused).
  const inputType = (a: string, i: number, all: string[]) => a.startsWith("--input-type") || all[i - 1] === "--input-type";
  const execArgv = process.execArgv.some(inputType) ? { execArgv: process.execArgv.filter((a, i, all) => !inputType(a, i, all)) } : {};
  const w = new Worker(workerFile(), { ...execArgv, resourceLimits: { maxOldGenerationSizeMb: compileBudget.heapMb, stackSizeMb: 4 } });
  w.on("message", (answer: CompileAnswer) => {
    if ("threadId" in answer) {
      if (worker === w) workerThreadId = answer.threadId;
      return;
    }
    if (!running || answer.id !== running.job.id) return;
    finish((p) => ("input" in answer ? p.resolve(answer.input) : p.reject(new ScriptError(answer.issues, answer.what))));
  });
  w.on("error", (err: Error & { code?: string }) => {
    void stopWorker();
    const heap = err.code === "ERR_WORKER_OUT_OF_MEMORY";
    finish((p) =>
      p.reject(
        heap
          ? refusal(
              p.job,
              `checking the ${p.job.kind === "script" ? "script" : "fault plan"} needed more than ${compileBudget.heapMb} MiB of memory (its budget), so it was refused`,
              "simplify it: fewer and shorter values, fewer aliases; every other session went on",
            )
          : refusal(
              p.job,
              `modelstub could not check the ${p.job.kind === "script" ? "script" : "fault plan"}: ${err.message}`,
              "this is a bug in modelstub: please report it with the text",
            ),
      ),
    );
  });
  w.on("exit", (code) => {
    if (worker !== w) return;
    worker = undefined;
    finish((p) =>
      p.reject(
        refusal(
          p.job,
          `the worker checking the ${p.job.kind === "script" ? "script" : "fault plan"} stopped (exit code ${code})`,
          "this is a bug in modelstub: please report it with the text",
        ),
      ),
    );
  });
  return w;
}

function runNext(): void {
  if (running) return;
  const next = waiting.shift();
  if (!next) {
    if (holders === 0) void stopWorker();
    // Idle, it holds no process open.
    else worker?.unref();
    return;
  }
  if (worker && workerHeapMb !== compileBudget.heapMb) void stopWorker();
  let w: Worker;
  try {
    workerHeapMb = compileBudget.heapMb;
    w = worker ??= startWorker();
  } catch (err) {
    next.reject(refusal(next.job, `modelstub could not check the text: ${(err as Error).message}`, "reinstall or rebuild modelstub"));
    return runNext();
  }
  w.ref();
  running = { ...next, timer: budgetTimer(next) };
  w.postMessage(next.job);
}

/** Whether this system reports a thread's CPU time (Linux): if not, the budget is wall time. */
const threadCpuReadable = currentThreadId() !== undefined;

/**
 * The wall time a compile may take however little CPU it got: this many times the budget, and
 * never less than wallCapFloorMs, so that a new worker starting on a busy machine (tens of ms of
 * wall time before it runs a line) is judged by the CPU it used, whatever the budget.
 */
const wallCapFactor = 12;
const wallCapFloorMs = 2_000;

/**
 * The running job's budget timer: when the budget's time has passed, the worker is ended if its
 * thread used the budget in CPU time (or, with no CPU time to read, at once); otherwise the timer
 * waits for the rest, up to the wall-clock cap.
 */
function budgetTimer(job: Pending): NodeJS.Timeout {
  const what = job.job.kind === "script" ? "script" : "fault plan";
  const budgetMs = compileBudget.timeMs;
  const started = performance.now();
  const wallCapMs = Math.max(budgetMs * wallCapFactor, wallCapFloorMs);
  // A worker started for this job has not said its thread id yet: its CPU time so far is all this job's.
  const cpuAtStart = workerThreadId === undefined ? 0 : threadCpuMs(workerThreadId);
  const refuse = (why: string) => {
    void stopWorker();
    finish((p) =>
      p.reject(refusal(p.job, `checking the ${what} ${why}, so it was refused`, `simplify it or split it into smaller ${what}s; every other session went on`)),
    );
  };
  const check = (): void => {
    if (!threadCpuReadable || cpuAtStart === undefined) return refuse(`took longer than ${budgetMs / 1000} s (its budget)`);
    // A worker that has not said its thread id yet is still starting: it has used none of the budget.
    const cpuNow = workerThreadId === undefined ? 0 : threadCpuMs(workerThreadId);
    if (cpuNow === undefined) return refuse(`took longer than ${budgetMs / 1000} s (its budget)`);
    const used = cpuNow - cpuAtStart;
    if (used >= budgetMs) return refuse(`used more than ${budgetMs / 1000} s of CPU time (its budget)`);
    const wall = performance.now() - started;
    if (wall >= wallCapMs)
      return refuse(`was not done after ${wallCapMs / 1000} s of wall time (its budget is ${budgetMs / 1000} s of CPU time; the machine is very busy)`);
    // At least one clock tick (10 ms) apart: the CPU time moves in ticks.
    if (running?.job === job.job) running.timer = setTimeout(check, Math.min(Math.max(budgetMs - used, 10), wallCapMs - wall));
  };
  return setTimeout(check, budgetMs);
}

/** A job as a caller gives it: the queue numbers it. */
export type NewJob = CompileJob extends infer J ? (J extends CompileJob ? Omit<J, "id"> : never) : never;

/** Queues a text for the worker: resolves with its validated input, or rejects with a ScriptError. */
export function submit(newJob: NewJob): Promise<ScriptInput | FaultPlanInput> {
  const job = { ...newJob, id: nextId++ } as CompileJob;
  return new Promise((resolve, reject) => {
    if (waiting.length >= maxCompilesWaiting) {
      reject(
        refusal(
          job,
          `${maxCompilesWaiting} scripts and fault plans are already waiting to be checked, so this one was refused`,
          "load fewer at once, or wait for the others",
        ),
      );
      return;
    }
    waiting.push({ job, resolve, reject });
    runNext();
  });
}

/** Counts a holder of the worker: it stays, once started, until every holder has let it go. */
export function holdWorker(): void {
  holders++;
}

/**
 * Lets the worker go for one holder; the last one ends it (after the text it is checking, if
 * any). Resolves once an idle worker's thread is gone: a closed server leaves nothing behind.
 */
export function releaseWorker(): Promise<void> {
  return --holders === 0 && !running ? stopWorker() : Promise.resolve();
}
