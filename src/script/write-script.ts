import { Document, visit, type Node } from "yaml";
import type { EntryInput, ScriptInput } from "./script-schema.js";

/** One entry to write, with the comment lines that say where it came from. */
export interface DraftEntry {
  /** Lines written as `# ...` above the entry (line breaks in them are flattened). */
  comments: string[];
  entry: EntryInput;
}

/** A list to write: the main list (`key` "") or a step's. */
export interface DraftList {
  key: string;
  onExhausted?: "fail" | "repeat-last" | "cycle";
  entries: DraftEntry[];
}

/** A script to write: what `writeScript` turns into commented YAML. */
export interface ScriptDraft {
  /** Lines written as `# ...` at the top of the file. */
  header: string[];
  name?: string;
  models?: ScriptInput["models"];
  defaults?: ScriptInput["defaults"];
  /** How a replay holds requests to the entries' `request:`, written as `replay:`. */
  replay?: ScriptInput["replay"];
  /** The lists, in the order they are written; the main list first whatever its place. */
  lists: DraftList[];
}

/** Mappings small enough to read on one line: `usage: { input_tokens: 3, output_tokens: 2 }`. */
const flowPaths: (string | number)[][] = [
  ["latency"],
  ["reply", "usage"],
  ["error", "trailers"],
  ["break", "error", "trailers"],
  ["match"],
  ["request", "tools"],
  ["request", "last_user"],
];

const comment = (indent: string, line: string) =>
  `${indent}# ${line.replace(/[\r\n\u2028\u2029]+/g, " ").replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "?")}`.trimEnd();

/**
 * A value as YAML text (no trailing line break), every string as the loader reads it back:
 * `yaml` writes DEL (U+007F) raw, which a script may not hold, so a string with one is
 * double-quoted and the DEL written as its escape.
 */
function yamlText(value: unknown, flow: (string | number)[][] = []): string {
  const doc = new Document(value);
  for (const path of flow) {
    const node = doc.getIn(path, true) as (Node & { flow?: boolean }) | undefined;
    if (node && typeof node === "object" && "items" in node) node.flow = true;
  }
  let del = false;
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value === "string" && node.value.includes("\x7f")) {
        node.type = "QUOTE_DOUBLE";
        del = true;
      }
    },
  });
  const text = doc.toString({ lineWidth: 0, flowCollectionPadding: true }).replace(/\n$/, "");
  return del ? text.replace(/\x7f/g, "\\x7f") : text;
}

/** Indents every line of `text` but the first by `indent`. */
const indentRest = (text: string, indent: string) => text.replace(/\n/g, `\n${indent}`);

/** A list's entries as YAML lines, each item at `indent`. */
function listLines(list: DraftList, indent: string): string[] {
  const out: string[] = [];
  list.entries.forEach((d, i) => {
    if (i > 0) out.push("");
    for (const c of d.comments) out.push(comment(indent, c));
    // Each recorded tool result on a line of its own: `{ tool: read, content: "..." }`.
    const results = (d.entry.request?.tool_results ?? []).map((_, i) => ["request", "tool_results", i]);
    out.push(`${indent}- ${indentRest(yamlText(d.entry, [...flowPaths, ...results]), `${indent}  `)}`);
  });
  return out;
}

/** A list under its key: a plain list, or `{on_exhausted, entries}` when it says what happens when spent. */
function keyedList(key: string, list: DraftList, indent: string): string[] {
  if (list.onExhausted === undefined) return [`${indent}${key}:`, ...listLines(list, `${indent}  `)];
  return [`${indent}${key}:`, `${indent}  on_exhausted: ${list.onExhausted}`, `${indent}  entries:`, ...listLines(list, `${indent}    `)];
}

/**
 * Writes a script for people to read and edit: a header comment, the name, models and defaults,
 * then the main list and each step's list, every entry under the comment lines that say where it
 * came from, a blank line between entries. Pure: the same draft always gives the same text, and
 * `loadScriptText` reads it back to exactly the entries given (strings of any content, DEL
 * included, round-trip; a text holding `{{` is a template to the loader, so callers keep such
 * texts out: see `templateHazard`).
 */
export function writeScript(draft: ScriptDraft): string {
  const lines: string[] = draft.header.map((h) => comment("", h));
  if (lines.length > 0) lines.push("");
  if (draft.name !== undefined) lines.push(yamlText({ name: draft.name }));
  if (draft.models !== undefined && draft.models.length > 0)
    lines.push(
      yamlText(
        { models: draft.models },
        draft.models.map((_, i) => ["models", i]),
      ),
    );
  if (draft.defaults !== undefined && Object.keys(draft.defaults).length > 0) lines.push(yamlText({ defaults: draft.defaults }, [["defaults", "latency"]]));
  if (draft.replay !== undefined) lines.push(yamlText({ replay: draft.replay }, [["replay"]]));
  const main = draft.lists.find((l) => l.key === "");
  const gap = () => (lines.length > 0 && lines[lines.length - 1] !== "" ? [""] : []);
  if (main) lines.push(...gap(), ...keyedList("entries", main, ""));
  const steps = draft.lists.filter((l) => l.key !== "");
  if (steps.length > 0) {
    lines.push(...gap(), "steps:");
    steps.forEach((l, i) => {
      if (i > 0) lines.push("");
      lines.push(...keyedList(yamlText(l.key), l, "  "));
    });
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Why a recorded text cannot be written as a script's literal, or undefined when it can: the
 * loader reads `{{` as the start of a template variable, and the script language has no escape
 * for it, so such a text would load as something else or not at all.
 */
export function templateHazard(text: string): string | undefined {
  return text.includes("{{") ? `it holds "{{", which a script reads as a template variable (the script language has no escape for it)` : undefined;
}
