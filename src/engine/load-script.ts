import { readFile } from "node:fs/promises";
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node as YamlNode } from "yaml";
import { compileScript, type CompiledScript, type Report } from "./compile-script.js";
import { explainZodIssues, type PathIssue } from "./explain-zod-issues.js";
import { ScriptError, type ScriptIssue } from "./script-error.js";
import { ScriptSchema } from "./script-schema.js";

/** Formats a field path the way the errors print it: `steps.plan[2].reply`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}

/** Finds the YAML node for a path: the deepest existing node on the way, or a key when asked. */
function locate(doc: Document, path: readonly (string | number)[], key?: string): YamlNode | undefined {
  let node: unknown = doc.contents;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) return node as YamlNode;
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof seg === "number" && node.items[seg]) {
      node = node.items[seg];
    } else break;
  }
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === key);
    if (pair && isScalar(pair.key)) return pair.key as YamlNode;
  }
  return (node ?? undefined) as YamlNode | undefined;
}

/**
 * Loads a script from text: parses YAML or JSON (JSON is YAML), validates it against the
 * schema, compiles it, and throws one ScriptError listing every problem with file, line,
 * column, field and a hint. Nothing half-loaded ever escapes: it returns a whole compiled
 * script or throws.
 */
export function loadScriptText(text: string, file: string): CompiledScript {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true });
  const at = (offset: number | undefined) => {
    if (offset === undefined) return { line: 1, column: 1 };
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length > 0) {
    throw new ScriptError(
      doc.errors.map((e) => ({
        file,
        ...at(e.pos[0]),
        path: "",
        message: `invalid YAML: ${e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}`,
        hint: e.code === "DUPLICATE_KEY" ? "each key may appear once in a mapping" : "check indentation and quoting near this position",
      })),
    );
  }
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    throw new ScriptError([
      { file, line: 0, column: 0, path: "", message: "the script is empty", hint: "a script is a mapping with `entries:` (a list of replies) or `steps:`" },
    ]);
  }
  const toIssue = (p: PathIssue): ScriptIssue => {
    const node = locate(doc, p.path, p.key);
    return { file, ...at(node?.range?.[0]), path: formatPath(p.path), message: p.message, ...(p.hint ? { hint: p.hint } : {}) };
  };
  const input: unknown = doc.toJS({ maxAliasCount: 100 });
  const parsed = ScriptSchema.safeParse(input);
  if (!parsed.success) {
    throw new ScriptError(sortIssues(explainZodIssues(parsed.error.issues, input, ScriptSchema).map(toIssue)));
  }
  const issues: ScriptIssue[] = [];
  const report: Report = (path, message, hint) => issues.push(toIssue({ path, message, ...(hint ? { hint } : {}) }));
  const script = compileScript(parsed.data, file, report);
  if (issues.length > 0) throw new ScriptError(sortIssues(issues));
  return script;
}

function sortIssues(issues: ScriptIssue[]): ScriptIssue[] {
  return issues.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** Loads a script file (YAML or JSON); a missing or unreadable file is a ScriptError too. */
export async function loadScriptFile(path: string): Promise<CompiledScript> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
    throw new ScriptError([{ file: path, line: 0, column: 0, path: "", message: `cannot read the file: ${reason}`, hint: "check the path given to --script" }]);
  }
  return loadScriptText(text, path);
}
