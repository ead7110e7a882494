import type { CompiledFaultPlan, CompiledScript } from "../script/compiled-script.js";
import { compileFaultPlanFile, compileScriptFile, holdScriptCompiler } from "../script/script-compiler.js";
import { ScriptError } from "../script/script-error.js";
import { resolveOptions, UsageError, type OptionSpec } from "./options.js";

const specs = [{ name: "help", type: "boolean", description: "Print this help." }] as const satisfies readonly OptionSpec[];

const usage =
  "usage: modelstub validate FILE...\n\nChecks script files. Prints each problem as FILE:LINE:COLUMN: FIELD: message (hint); exits 0 when every file is valid, 1 otherwise.\n";

/**
 * Loads and checks one script file, printing its problems to stderr exactly as `validate` does
 * (the capped lines of formatIssues); undefined when it is invalid. `session load` checks with
 * this before it sends anything, so both commands say the same about the same file.
 */
export function checkScriptFile(file: string): Promise<CompiledScript | undefined> {
  // In the compile worker, as a server checks it: a pathological file is refused, not a crash.
  return printingProblems(compileScriptFile(file));
}

/** Checks a fault plan file as `checkScriptFile` checks a script (its steps are the server's to check). */
export function checkPlanFile(file: string): Promise<CompiledFaultPlan | undefined> {
  return printingProblems(compileFaultPlanFile(file));
}

/** What `loading` loads, or undefined once a ScriptError's lines are printed to stderr. */
async function printingProblems<T>(loading: Promise<T>): Promise<T | undefined> {
  try {
    return await loading;
  } catch (err) {
    if (!(err instanceof ScriptError)) throw err;
    for (const line of err.lines) process.stderr.write(`${line}\n`);
    return undefined;
  }
}

/** `modelstub validate FILE...`: checks every file, prints its problems, exits 0 or 1. */
export async function validate(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = resolveOptions(specs, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`modelstub validate: ${err.message}\n\n${usage}`);
    return 2;
  }
  const files = parsed.positionals;
  if (parsed.options["help"] || files.length === 0) {
    process.stdout.write(usage);
    return files.length === 0 && !parsed.options["help"] ? 2 : 0;
  }
  let failed = 0;
  // One worker for every file.
  const compiler = holdScriptCompiler();
  try {
    for (const file of files) {
      const script = await checkScriptFile(file);
      if (!script) {
        failed++;
        continue;
      }
      process.stdout.write(
        `${file}: ok (${script.entryCount} entr${script.entryCount === 1 ? "y" : "ies"} in ${script.lists.size} list${script.lists.size === 1 ? "" : "s"})\n`,
      );
    }
  } finally {
    await compiler.release();
  }
  return failed === 0 ? 0 : 1;
}
