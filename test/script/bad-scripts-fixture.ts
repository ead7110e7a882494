import { loadScriptFile, ScriptError } from "../../src/index.js";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { meaningMistakes } from "./bad-scripts-meaning.js";
import { shapeMistakes } from "./bad-scripts-shape.js";
import { syntaxMistakes } from "./bad-scripts-syntax.js";

/*
 * The corpus of bad scripts: each fixture is one mistake a person makes, and each is pinned
 * to the exact lines `modelstub validate` prints (and `modelstub serve --script` shows after
 * "cannot load script "). A change to any message shows up here as a diff to review.
 */

// Paths in messages are as given: relative to the working directory, like a user's.
const dir = relative(process.cwd(), fileURLToPath(new URL("../fixtures/bad-scripts", import.meta.url)))
  .split("\\")
  .join("/");
export const pathOf = (name: string) => `${dir}/${name}`;

/** [fixture, ...the lines the user sees, each after "FILE:"]. */
export const corpus: [string, ...string[]][] = [...syntaxMistakes, ...shapeMistakes, ...meaningMistakes];

export async function loadError(file: string): Promise<ScriptError> {
  try {
    await loadScriptFile(file);
  } catch (err) {
    if (err instanceof ScriptError) return err;
    throw err;
  }
  throw new Error(`${file} loaded, but it is in the bad-scripts corpus`);
}
