import type { CompiledScript } from "../script/compiled-script.js";
import { ScriptError } from "../script/script-error.js";
import { loadScriptFile } from "../script/load-script.js";
import { compileSource, type ScriptSource } from "./script-source.js";

/** What validateScript() found: a valid script's size, or the problems `modelstub validate` prints. */
export type ScriptValidation =
  | {
      ok: true;
      /** Scripted entries across every list. */
      entries: number;
      /** Lists: `entries` and each of `steps`. */
      lists: number;
    }
  | {
      ok: false;
      /**
       * One line per problem, exactly as `modelstub validate` prints them:
       * `FILE:LINE:COLUMN: FIELD: message (hint: ...)`, capped like the CLI's with a closing
       * `... and N more problems` line.
       */
      problems: string[];
    };

function validation(load: () => CompiledScript): ScriptValidation {
  try {
    const script = load();
    return { ok: true, entries: script.entryCount, lists: script.lists.size };
  } catch (err) {
    if (err instanceof ScriptError) return { ok: false, problems: [...err.lines] };
    throw err;
  }
}

/**
 * Checks a script without throwing: `{ ok: true, entries, lists }`, or `{ ok: false, problems }`
 * with the lines `modelstub validate` would print for the same text under the same file name.
 *
 * @param source YAML or JSON text, or a script object
 * @param file the name the problems start with (default `<script>`, or `<script object>`)
 */
export function validateScript(source: string | ScriptSource, file?: string): ScriptValidation {
  return validation(() => compileSource(source, file));
}

/** Checks a script file as `modelstub validate PATH` does; resolves with what it found. */
export async function validateScriptFile(path: string): Promise<ScriptValidation> {
  try {
    const script = await loadScriptFile(path);
    return validation(() => script);
  } catch (err) {
    return validation(() => {
      throw err;
    });
  }
}
