import { readFile } from "node:fs/promises";
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node as YamlNode } from "yaml";
import { compileScript, type CompiledScript, type Report } from "./compile-script.js";
import { explainYamlError } from "./explain-yaml-error.js";
import { findCollectionKeys } from "./find-collection-keys.js";
import { explainZodIssues, type PathIssue } from "./explain-zod-issues.js";
import { findJsonError } from "./find-json-error.js";
import { ScriptError, type ScriptIssue } from "./script-error.js";
import { ScriptSchema } from "./script-schema.js";

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

const keyOf = (p: unknown): string | undefined => (isPair(p) && isScalar(p.key) ? String(p.key.value) : undefined);

/** Finds the YAML node for a path: the deepest existing node on the way, or a key when asked. */
function locate(doc: Document, path: readonly (string | number)[], key?: string): YamlNode | undefined {
  let node: unknown = doc.contents;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => keyOf(p) === String(seg));
      if (!pair) return node as YamlNode;
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof seg === "number" && node.items[seg]) {
      node = node.items[seg];
    } else break;
  }
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => keyOf(p) === key);
    if (pair && isScalar(pair.key)) return pair.key as YamlNode;
  }
  return (node ?? undefined) as YamlNode | undefined;
}

/** The field path of the node that holds `offset`, for syntax errors inside a mostly parsed file. */
function pathAt(doc: Document, offset: number): (string | number)[] {
  const path: (string | number)[] = [];
  const inside = (n: unknown) => {
    const r = (n as YamlNode | null)?.range;
    return !!r && r[0] <= offset && offset < r[2];
  };
  let node: unknown = doc.contents;
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => inside(p.key) || inside(p.value));
      const k = pair && keyOf(pair);
      // On a key, the path stops at its mapping: a broken line is often parsed as a key.
      if (!pair || k === undefined || inside(pair.key)) return path;
      path.push(k);
      node = pair.value;
    } else if (isSeq(node)) {
      const i = node.items.findIndex(inside);
      if (i < 0) return path;
      path.push(i);
      node = node.items[i];
    } else return path;
  }
}

/** Offset of `needle` inside the node's own source text, so a message can point into a long text. */
function offsetOf(text: string, node: YamlNode | undefined, needle: string | undefined): number | undefined {
  const start = node?.range?.[0];
  if (start === undefined) return undefined;
  if (needle === undefined) return start;
  const at = text.slice(start, node!.range![1]).indexOf(needle);
  return at >= 0 ? start + at : start;
}

/** Messages are printed one per line: a newline inside one (a key with a line break) is escaped. */
const oneLine = (s: string) => s.replace(/\r?\n/g, "\\n");

/**
 * Loads a script from text: parses YAML or JSON (JSON is YAML; a file named .json must also be
 * strict JSON), validates it against the schema, compiles it, and throws one ScriptError listing
 * every problem with file, line, column, field and a hint. Nothing half-loaded ever escapes: it
 * returns a whole compiled script or throws.
 */
export function loadScriptText(text: string, file: string): CompiledScript {
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
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true });
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
    throw new ScriptError([issue(0, [], "the script is empty", "a script is a mapping with `entries:` (a list of replies) or `steps:`")]);
  }
  // Before toJS, which would turn such a key into a text, and print a Node warning doing so.
  if (collectionKeys.length > 0) throw new ScriptError(sortIssues(keyIssues(collectionKeys)));
  const toIssue = (p: PathIssue): ScriptIssue => {
    const node = locate(doc, p.path, p.key);
    return issue(offsetOf(text, node, p.needle), p.path, p.message, p.hint);
  };
  const input: unknown = doc.toJS({ maxAliasCount: 100 });
  const parsed = ScriptSchema.safeParse(input);
  if (!parsed.success) {
    throw new ScriptError(sortIssues(explainZodIssues(parsed.error.issues, input, ScriptSchema).map(toIssue)));
  }
  const issues: ScriptIssue[] = [];
  const report: Report = (path, message, hint, where) => issues.push(toIssue({ path, message, ...(hint ? { hint } : {}), ...where }));
  const script = compileScript(parsed.data, file, report);
  if (issues.length > 0) throw new ScriptError(sortIssues(issues));
  return script;
}

function sortIssues(issues: ScriptIssue[]): ScriptIssue[] {
  // File order, so the list reads top to bottom; sort is stable for issues at one place.
  return issues.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** Loads a script file (YAML or JSON); a missing or unreadable file is a ScriptError too. */
export async function loadScriptFile(path: string): Promise<CompiledScript> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
    throw new ScriptError([{ file: path, line: 0, column: 0, path: "", message: `cannot read the file: ${reason}`, hint: "check the path; a relative path starts from the current directory" }]);
  }
  return loadScriptText(text, path);
}
