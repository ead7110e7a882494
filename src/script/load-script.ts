// Longer than 250 lines because it is the one path from text to a checked script or fault plan:
// validation whose every issue names file, line, column and field, shared by both.
import { dirname } from "node:path";
import type { z } from "zod";
import { isScalar, LineCounter } from "yaml";
import { checkAliases, findForeignTags, findTooDeep, tooDeepAt } from "./check-structure.js";
import { compileScript } from "./compile-script.js";
import type { Report } from "./report.js";
import type { CompiledScript } from "./compiled-script.js";
import { explainYamlError } from "./explain-yaml-error.js";
import { findCollectionKeys } from "./find-collection-keys.js";
import { explainZodIssues, type PathIssue } from "./explain-zod-issues.js";
import { findJsonError } from "./find-json-error.js";
import { locate, offsetOf, pathAt } from "./locate.js";
import { ScriptError, type ScriptIssue } from "./script-error.js";
import { parseYamlBounded } from "./parse-yaml-bounded.js";
import { readSourceFile, sizeIssue } from "./read-source-file.js";
import { echoesRepair, repairInput, type Reparse } from "./repair-input.js";
import { resolveTextFiles, textFilesIn, type TextFileReader } from "./resolve-text-files.js";
import { ScriptSchema, type ScriptInput } from "./script-schema.js";

/** Formats a field path the way the errors print it: `steps.plan[2].reply`, `steps["a b"]`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (!/^[A-Za-z_][\w-]*$/.test(seg)) out += `[${JSON.stringify(seg)}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}

/** Messages are printed one per line: a newline inside one (a key with a line break) is escaped. */
const oneLine = (s: string) => s.replace(/\r?\n/g, "\\n");

// Characters YAML does not allow in a file (and JSON only escaped): a sign of a binary file.
const controlCharacter = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;

/** The first control character of the text, as an issue at its line and column. */
function controlIssue(text: string, file: string): ScriptIssue | undefined {
  const m = controlCharacter.exec(text);
  if (!m) return undefined;
  const before = text.slice(0, m.index);
  const line = before.split("\n").length;
  const column = m.index - before.lastIndexOf("\n");
  const hex = m[0].charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");
  return {
    file,
    line,
    column,
    path: "",
    message: `the script holds the control character U+00${hex}: a script is text, and YAML allows only tabs and line breaks among control characters`,
    hint: `remove it, or write it as an escape inside a double-quoted text ("\\x${hex}"); a binary file is not a script`,
  };
}

/**
 * Loads a script from text: parses YAML or JSON (JSON is YAML; a file named .json must also be
 * strict JSON), validates it against the schema, compiles it, and throws one ScriptError listing
 * every problem with file, line, column, field and a hint. Nothing half-loaded ever escapes: it
 * returns a whole compiled script or throws, and it throws nothing but a ScriptError.
 */
export function loadScriptText(text: string, file: string, readTextFile?: TextFileReader): CompiledScript {
  return onlyScriptErrors(file, "script", () => loadScript(text, file, readTextFile).script);
}

/**
 * Checks a script text as loadScriptText does (every problem a ScriptError), and answers the
 * validated input it compiled: plain data that crosses a worker's boundary, where a compiled
 * script (it holds functions) cannot. compileCheckedScript turns it into the same script.
 */
export function checkScriptText(text: string, file: string, readTextFile?: TextFileReader): ScriptInput {
  return onlyScriptErrors(file, "script", () => loadScript(text, file, readTextFile).input);
}

/** What `load` returns; any throw but a ScriptError becomes one, saying it is a bug. */
export function onlyScriptErrors<T>(file: string, what: "script" | "fault plan", load: () => T): T {
  try {
    return load();
  } catch (err) {
    // The shared reader says "script"; a plan's problems say what they are about.
    if (err instanceof ScriptError) throw err.what === what ? err : new ScriptError(err.issues, what);
    // A stack trace helps no script author, and must not become a crash or an INTERNAL status.
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new ScriptError(
      [
        {
          file,
          line: 0,
          column: 0,
          path: "",
          message: `modelstub could not load the ${what}: ${why}`,
          hint: `this is a bug in modelstub: please report it with the ${what === "script" ? "script" : "plan"}`,
        },
      ],
      what,
    );
  }
}

/** A script text as the schema validated it (what compileScript takes), and how to place a problem. */
function validateScript(text: string, file: string): { input: ScriptInput; toIssue: (p: PathIssue) => ScriptIssue; refused?: Refused } {
  return validateText(text, file, ScriptSchema, {
    message: "the script is empty",
    hint: "a script is a mapping with `entries:` (a list of replies) or `steps:`",
  });
}

/**
 * A YAML or JSON text as `schema` validated it, and how to place a problem at a path: every
 * check and diagnostic a script gets (size, control characters, YAML and JSON syntax, depth,
 * aliases, zod issues with line, column and a hint). Fault plan files are read through it too.
 */
export function validateText<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  empty: { message: string; hint: string },
): { input: z.output<S>; toIssue: (p: PathIssue) => ScriptIssue; refused?: Refused } {
  // Before parsing, which costs about a second per MiB and 100 times the script in memory.
  const tooBig = sizeIssue(Buffer.byteLength(text, "utf8"), file);
  if (tooBig) throw new ScriptError([tooBig]);
  const control = controlIssue(text, file);
  if (control) throw new ScriptError([control]);
  const lineCounter = new LineCounter();
  const at = (offset: number | undefined) => {
    if (offset === undefined) return { line: 1, column: 1 };
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const issue = (offset: number | undefined, path: (string | number)[], message: string, hint: string | undefined): ScriptIssue => ({
    file,
    ...at(offset),
    path: oneLine(formatPath(path)),
    message: oneLine(message),
    ...(hint ? { hint: oneLine(hint) } : {}),
  });
  // Too deep a text is refused while it is tokenized, before the composer recurses through it.
  const parsed = parseYamlBounded(text, { lineCounter, uniqueKeys: true, strict: true });
  if ("tooDeep" in parsed) {
    const { message, hint } = tooDeepAt(parsed.tooDeep.offset);
    throw new ScriptError([issue(parsed.tooDeep.offset, parsed.tooDeep.path, message, hint)]);
  }
  const doc = parsed.doc;
  // Before anything walks the document recursively (the JSON check, visit, toJS, zod): a flow
  // sequence's `a: b` items are mappings the parser's stack did not count.
  const deep = findTooDeep(doc);
  if (deep) throw new ScriptError([issue(deep.offset, pathAt(doc, deep.offset), deep.message, deep.hint)]);
  if (/\.json$/i.test(file) && text.trim() !== "") {
    const bad = findJsonError(text);
    // The path comes from the JSON walk itself: the YAML reading of broken JSON is no guide.
    if (bad) throw new ScriptError([issue(bad.offset, bad.path, `invalid JSON: ${bad.message}`, bad.hint)]);
  }
  // Checked before the syntax errors: `reply: {{last_user}} said` is also a syntax error, and
  // "must be quoted" says best what went wrong on that line.
  const collectionKeys = findCollectionKeys(doc, text);
  const keyIssues = (keys: typeof collectionKeys) => keys.map((k) => issue(k.offset, pathAt(doc, k.offset), k.message, k.hint));
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e) => explainYamlError(e, text));
    // After an unclosed bracket the parser misreads the rest of the file: its errors only echo it.
    const unclosedAt = Math.min(...problems.filter((p) => p.unclosed).map((p) => p.offset));
    const seenLines = new Set<number>();
    const issues: ScriptIssue[] = [];
    const yamlIssues = problems
      .filter((p) => p.unclosed || p.offset < unclosedAt)
      .map((p) => issue(p.offset, pathAt(doc, p.pathOffset ?? p.offset), `invalid YAML: ${p.message}`, p.hint));
    // Other lists or mappings as keys are often the parser's reading of a syntax error itself.
    for (const found of [...keyIssues(collectionKeys.filter((k) => k.template)), ...yamlIssues]) {
      // One slip often trips several rules on the same line; the first says it best.
      if (seenLines.has(found.line)) continue;
      seenLines.add(found.line);
      issues.push(found);
    }
    throw new ScriptError(sortIssues(issues));
  }
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    throw new ScriptError([issue(0, [], empty.message, empty.hint)]);
  }
  // Before toJS, which would turn such a key into a text, and print a Node warning doing so.
  if (collectionKeys.length > 0) throw new ScriptError(sortIssues(keyIssues(collectionKeys)));
  const toIssue = (p: PathIssue): ScriptIssue => {
    const node = locate(doc, p.path, p.key);
    return issue(offsetOf(text, node, p.needle), p.path, p.message, p.hint);
  };
  // Aliases are checked here rather than by toJS, which throws without saying where.
  const aliasProblems = checkAliases(doc);
  if (aliasProblems.length > 0) throw new ScriptError(sortIssues(aliasProblems.map((p) => issue(p.offset, pathAt(doc, p.offset), p.message, p.hint))));
  const tagProblems = findForeignTags(doc);
  if (tagProblems.length > 0)
    throw new ScriptError(sortIssues(tagProblems.map((p) => issue(tagStart(text, p.offset), pathAt(doc, p.offset), p.message, p.hint))));
  const input: unknown = doc.toJS({ maxAliasCount: -1 });
  const valid = schema.safeParse(input);
  if (valid.success) return { input: valid.data, toIssue };
  const refused = explainZodIssues(valid.error.issues, input, schema);
  // The compiler still checks what the schema accepted: every mistake in one run, not the first kind.
  const reparse: Reparse = (value) => {
    const again = schema.safeParse(value);
    return again.success ? { data: again.data } : { issues: explainZodIssues(again.error.issues, value, schema, [], { guesses: 0 }) };
  };
  const repaired = repairInput(input, refused, reparse);
  if (!repaired) throw new ScriptError(sortIssues(refused.map(toIssue)));
  return {
    input: repaired.data as z.output<S>,
    toIssue,
    refused: { issues: refused.map(toIssue), removed: repaired.removed, originalPath: repaired.originalPath },
  };
}

/** What the schema refused, once the rest of the input was repaired to be checked further. */
export interface Refused {
  /** The schema's problems, located. */
  issues: ScriptIssue[];
  /** Original paths of what the repair took out. */
  removed: (string | number)[][];
  /** The original path of a path of the repaired input. */
  originalPath(path: readonly (string | number)[]): (string | number)[];
}

/**
 * A Report that collects the compiler's problems into `issues`. After a repair, paths of the
 * repaired input are turned back into the file's, and a problem at or above something taken out
 * is left out: it may only echo what the schema already refused.
 */
export function collectingReport(issues: ScriptIssue[], toIssue: (p: PathIssue) => ScriptIssue, refused: Refused | undefined): Report {
  return (path, message, hint, where) => {
    const original = refused ? refused.originalPath(where?.key !== undefined ? [...path, where.key] : path) : path;
    if (refused && echoesRepair(original, refused.removed)) return;
    const at = refused && where?.key !== undefined ? original.slice(0, -1) : original;
    issues.push(toIssue({ path: at, message, ...(hint ? { hint } : {}), ...where }));
  };
}

/**
 * The validated form of a script text, before compiling: what the built-in default script
 * embeds (default-script-input.ts), so `serve` skips YAML and the schema; a test keeps the two equal.
 */
export function validatedScriptInput(text: string, file: string): ScriptInput {
  return validateScript(text, file).input;
}

function loadScript(text: string, file: string, readTextFile: TextFileReader | undefined): { script: CompiledScript; input: ScriptInput } {
  const { input, toIssue, refused } = validateScript(text, file);
  const issues: ScriptIssue[] = [...(refused?.issues ?? [])];
  const report = collectingReport(issues, toIssue, refused);
  // Before compiling: a reply's text_file becomes its text, compiled as a text in the script is.
  const unread = resolveTextFiles(input, readTextFile);
  for (const p of unread) report(p.path, p.message, p.hint);
  if (unread.length > 0) throw new ScriptError(sortIssues(issues));
  const script = compileScript(input, file, report);
  if (issues.length > 0) throw new ScriptError(sortIssues(issues));
  return { script, input };
}

export function sortIssues(issues: ScriptIssue[]): ScriptIssue[] {
  // File order, so the list reads top to bottom; sort is stable for issues at one place.
  return issues.sort((a, b) => a.line - b.line || a.column - b.column);
}

export { readSourceFile };

/** Reads and compiles a script file as `serve --script PATH` does; rejects with a ScriptError (a missing file too). */
export async function loadScriptFile(path: string): Promise<CompiledScript> {
  return loadScriptText(await readSourceFile(path), path, textFilesIn(dirname(path)));
}

/** Where the tag before the value at `offset` starts (the value's own start without one on its line). */
function tagStart(text: string, offset: number): number {
  let bang = text.lastIndexOf("!", offset);
  if (bang < 0 || text.slice(bang, offset).includes("\n")) return offset;
  while (bang > 0 && text[bang - 1] === "!") bang--;
  return bang;
}
