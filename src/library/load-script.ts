import type { CompiledScript } from "../script/compiled-script.js";
import { compileSource, type ScriptSource } from "./script-source.js";

/**
 * Compiles a script from YAML or JSON text (or a script object) exactly as `modelstub serve`
 * does, and returns it ready to serve: pass it to startServer({ script }) or
 * control.loadScript() to skip compiling it again.
 *
 * Throws a ScriptError when the script is not valid: its `lines` are the lines
 * `modelstub validate` prints (`FILE:LINE:COLUMN: FIELD: message (hint: ...)`), its `message` is
 * them after "cannot load script ", and its `issues` list every problem, uncapped.
 *
 * @param source YAML or JSON text, or a script object
 * @param file the name diagnostics give the script (default `<script>`, or `<script object>`);
 *   a name ending in `.json` also requires strict JSON, as for a file
 */
export function loadScript(source: string | ScriptSource, file?: string): CompiledScript {
  return compileSource(source, file);
}
