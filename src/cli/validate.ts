import { loadScriptFile } from "../engine/load-script.js";
import { ScriptError } from "../engine/script-error.js";

/** `modelstub validate FILE...`: checks every file, prints its problems, exits 0 or 1. */
export async function validate(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.length === 0) {
    process.stdout.write("usage: modelstub validate FILE...\n\nChecks script files. Prints each problem as FILE:LINE:COLUMN: FIELD: message (hint); exits 0 when every file is valid, 1 otherwise.\n");
    return argv.length === 0 ? 2 : 0;
  }
  let failed = 0;
  for (const file of argv) {
    try {
      const script = await loadScriptFile(file);
      process.stdout.write(`${file}: ok (${script.entryCount} entr${script.entryCount === 1 ? "y" : "ies"} in ${script.lists.size} list${script.lists.size === 1 ? "" : "s"})\n`);
    } catch (err) {
      if (!(err instanceof ScriptError)) throw err;
      failed++;
      // The capped lines: the first problems and a count of the rest (see formatIssues).
      for (const line of err.lines) process.stderr.write(`${line}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}
