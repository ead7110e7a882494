import type { z } from "zod";
import type { CompiledScript } from "../script/compiled-script.js";
import { loadScriptText } from "../script/load-script.js";
import { ScriptError } from "../script/script-error.js";
import { compilerPerCall } from "../script/script-compiler.js";
import type { ScriptSchema } from "../script/script-schema.js";

/**
 * A script written as an object, with the same keys as the YAML (`entries`, `steps`,
 * `defaults`, ...): typed from the schema the loader validates with, so an editor completes it.
 */
export type ScriptObject = z.input<typeof ScriptSchema>;

/**
 * A script to serve: YAML or JSON text, a script object, or a script loadScript() already
 * compiled (load once, serve it in many servers or sessions).
 */
export type ScriptSource = string | ScriptObject | CompiledScript;

/** The name diagnostics give a script passed as text, when the caller names no file. */
export const textSourceName = "<script>";
/** The name diagnostics give a script passed as an object, when the caller names no file. */
export const objectSourceName = "<script object>";

/** Whether `source` is a script loadScript() compiled (its lists are a Map; no script object has one). */
export function isCompiledScript(source: ScriptSource): source is CompiledScript {
  return typeof source === "object" && source !== null && (source as Partial<CompiledScript>).lists instanceof Map;
}

/**
 * Compiles any ScriptSource through the CLI's loader. An object goes through it as indented
 * JSON text, so it gets the same checks and the same diagnostics as a file, with lines that
 * point into `JSON.stringify(object, null, 2)`. Throws ScriptError and nothing else.
 */
export function compileSource(source: ScriptSource, file?: string): CompiledScript {
  if (typeof source === "string") return loadScriptText(source, file ?? textSourceName);
  if (isCompiledScript(source)) return source;
  const name = file ?? objectSourceName;
  return loadScriptText(jsonTextOf(source, name, "script"), name);
}

/**
 * Compiles any ScriptSource as compileSource does, but a text or an object in the compile
 * worker (script-compiler.ts): what a serving process does with a script it is handed.
 */
export async function compileSourceOffLoop(source: ScriptSource, file: string): Promise<CompiledScript> {
  if (typeof source === "string") return compilerPerCall.script(source, file);
  if (isCompiledScript(source)) return source;
  return compilerPerCall.script(jsonTextOf(source, file, "script"), file);
}

/**
 * An object (a script or a fault plan) as the indented JSON text the loader reads, so its
 * diagnostics point at lines of `JSON.stringify(object, null, 2)`. Something that is no JSON (a
 * cycle, a BigInt) is still a ScriptError, as the contract says.
 */
export function jsonTextOf(source: object, file: string, what: "script" | "fault plan"): string {
  try {
    return JSON.stringify(source, null, 2) ?? "";
  } catch (err) {
    const hint = `a ${what === "script" ? "script" : "plan"} object holds only texts, numbers, booleans, lists and plain objects`;
    throw new ScriptError(
      [
        {
          file,
          line: 0,
          column: 0,
          path: "",
          message: `the ${what === "script" ? "script" : "plan"} object cannot be read as JSON: ${(err as Error).message}`,
          hint,
        },
      ],
      what,
    );
  }
}
