import { parentPort } from "node:worker_threads";
import { currentThreadId } from "./thread-cpu-time.js";
import { checkFaultPlanText } from "./load-fault-plan.js";
import { checkScriptText } from "./load-script.js";
import { textFilesIn } from "./resolve-text-files.js";
import type { ScriptError, ScriptIssue } from "./script-error.js";
import type { FaultPlanInput } from "./fault-plan-schema.js";
import type { ScriptInput } from "./script-schema.js";

/*
 * The compile worker's thread (script-compiler.ts starts it with a heap limit and ends it past a
 * time budget): every check of a script or fault plan text runs here, off the serving loop. It
 * answers the validated input, plain data that the serving thread compiles again (compiled
 * scripts hold functions, which cannot be posted), or the problems found.
 */

/** One text to check: a script, or a fault plan (checked against a script's step names when given). */
export type CompileJob =
  /** `textFilesFrom`: the folder a script file's `text_file`s are read from (a script given as text has none). */
  | { id: number; kind: "script"; text: string; file: string; textFilesFrom?: string }
  | { id: number; kind: "plan"; text: string; file: string; script?: { name: string; steps: string[] } };

/** The worker's answer: the validated input, or the problems of the text; first of all, its thread id (thread-cpu-time.ts). */
export type CompileAnswer =
  | { threadId: number }
  | { id: number; input: ScriptInput | FaultPlanInput }
  | { id: number; issues: ScriptIssue[]; what: "script" | "fault plan" };

function check(job: CompileJob): CompileAnswer {
  try {
    if (job.kind === "script")
      return { id: job.id, input: checkScriptText(job.text, job.file, job.textFilesFrom !== undefined ? textFilesIn(job.textFilesFrom) : undefined) };
    const script = job.script && { name: job.script.name, lists: new Set(job.script.steps) };
    return { id: job.id, input: checkFaultPlanText(job.text, job.file, script) };
  } catch (err) {
    // check*Text throw nothing but a ScriptError.
    const e = err as ScriptError;
    return { id: job.id, issues: [...e.issues], what: e.what };
  }
}

// The thread id first, so that the time budget counts this thread's CPU time.
const threadId = currentThreadId();
if (threadId !== undefined) parentPort?.postMessage({ threadId } satisfies CompileAnswer);
parentPort?.on("message", (job: CompileJob) => parentPort!.postMessage(check(job)));
