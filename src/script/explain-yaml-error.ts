import type { YAMLError } from "yaml";
import { findUnclosedBracket } from "./find-unclosed-bracket.js";

/** A YAML syntax error, reworded, and moved to the character a person should look at. */
export interface YamlProblem {
  offset: number;
  /** Where to read the field path, when not at `offset` (a tab's path is that of the text after it). */
  pathOffset?: number;
  message: string;
  hint: string;
  /** The problem is a bracket never closed: the parser misread all that follows it. */
  unclosed?: boolean;
}

/** The first non-blank character of the line that holds `offset`, when offset is in its indentation. */
function pastIndentation(text: string, offset: number): number {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  if (text.slice(lineStart, offset).trim() !== "") return offset;
  let i = offset;
  while (text[i] === " ") i++;
  return text[i] === "\n" || i >= text.length ? offset : i;
}

/** The key written at `offset` (`times` in `    times: 3`). */
function keyAt(text: string, offset: number): string {
  const m = /^(?:"([^"]*)"|'([^']*)'|([^:\s]+))/.exec(text.slice(offset));
  return m ? (m[1] ?? m[2] ?? m[3]!) : "";
}

/** The rest of the line at `offset`, quoted the way YAML would take it as one text. */
function quoted(text: string, offset: number): string {
  const end = text.indexOf("\n", offset);
  const rest = text.slice(offset, end < 0 ? undefined : end).trim();
  return rest.includes('"') ? `'${rest.replace(/'/g, "''")}'` : `"${rest}"`;
}

/**
 * Rewords the yaml library's errors for a person editing a script, with the fix for the
 * usual slips (tabs, a `: ` in an unquoted text, backslashes of a regex in double quotes).
 */
export function explainYamlError(e: YAMLError, text: string): YamlProblem {
  const pos = e.pos[0];
  const first = e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
  switch (e.code) {
    case "TAB_AS_INDENT": {
      const after = /[ \t]*/y;
      after.lastIndex = pos;
      after.exec(text);
      return {
        offset: pos,
        pathOffset: after.lastIndex,
        message: "a tab is used for indentation",
        hint: "YAML indents with spaces only: replace the tab with spaces",
      };
    }
    case "BAD_INDENT": {
      // The parser says "must be sufficiently indented and end with a ]" at the end of the text;
      // when no ] follows at all, the bracket is what needs fixing, where it was opened.
      const flow = /^Flow (sequence|map) in block collection/.exec(first)?.[1];
      const open = flow === "sequence" ? "[" : "{";
      const opened = flow ? findUnclosedBracket(text, open, pos) : undefined;
      if (opened !== undefined) {
        const close = open === "[" ? "]" : "}";
        return {
          offset: opened,
          message: `the ${open} ${flow === "sequence" ? "list" : "mapping"} opened here is not closed`,
          hint: `add ${close} after its last item`,
          unclosed: true,
        };
      }
      return {
        offset: pastIndentation(text, pos),
        message: "this key is not indented like the keys beside it",
        hint: "keys of one mapping start in the same column: line it up with the key above, or indent it further to nest it",
      };
    }
    case "DUPLICATE_KEY":
      return { offset: pos, message: `the key \`${keyAt(text, pos)}\` is given twice in this mapping`, hint: "each key may appear once: remove one of them" };
    case "BAD_DQ_ESCAPE":
      return {
        offset: pos,
        message: `${first.replace(/^Invalid escape sequence/, "invalid escape")} in a double-quoted text`,
        hint: "in double quotes a backslash starts an escape: write a regex in single quotes ('\\d+'), or double each backslash",
      };
    case "BLOCK_AS_IMPLICIT_KEY":
      return first.startsWith("Nested mappings")
        ? { offset: pos, message: "a `: ` inside an unquoted text starts a mapping", hint: `quote the whole text: ${quoted(text, pos)}` }
        : {
            offset: pastIndentation(text, pos),
            message: "a list item where a key of the mapping above was expected",
            hint: "a mapping cannot also be a list: put the items under a key such as `entries:`, indented below it",
          };
    case "MISSING_CHAR": {
      const quote = /closing (["'])quote/.exec(first)?.[1];
      if (quote) {
        const open = text.lastIndexOf(quote, pos - 1);
        return {
          offset: open >= 0 ? open : pos,
          message: `this ${quote === '"' ? "double" : "single"}-quoted text is not closed`,
          hint: `add the closing ${quote} at the end of the text`,
        };
      }
      if (first.startsWith("Sequence item without")) {
        return {
          offset: pastIndentation(text, pos),
          message: "a list item without its `- `",
          hint: "start the item with `- `, or indent it like the keys of the item above",
        };
      }
      return { offset: pastIndentation(text, pos), message: "expected `key: value` here", hint: "a key needs a colon and a space after it" };
    }
    case "MULTILINE_IMPLICIT_KEY":
      return {
        offset: pastIndentation(text, pos),
        message: "a key runs over more than one line",
        hint: "check for a missing colon, or a missing closing quote above",
      };
    case "UNEXPECTED_TOKEN":
      if (text[pos - 1] === "'") {
        return { offset: pos, message: "text after the end of a single-quoted text", hint: "inside single quotes write '' for one ', or use double quotes" };
      }
      return { offset: pos, message: `unexpected ${first.replace(/^Unexpected /, "")}`, hint: "check the quoting and the colons on this line" };
    default:
      return { offset: pos, message: first.charAt(0).toLowerCase() + first.slice(1), hint: "check the indentation and quoting near this position" };
  }
}
