/** Where a JSON text first breaks the JSON grammar, and what to do about it. */
export interface JsonSyntaxError {
  /** Offset of the offending character (the text's length for an early end). */
  offset: number;
  /** The field path down to the error: the keys and list indexes entered so far. */
  path: (string | number)[];
  message: string;
  hint: string;
}

import { maxNestingDepth } from "./script-limits.js";

class Stop {
  constructor(readonly error: JsonSyntaxError) {}
}

/**
 * Checks a `.json` script against the strict JSON grammar. The loader parses every script
 * with the YAML parser (JSON is YAML), which forgives trailing commas, comments and single
 * quotes; a file named .json should not silently be YAML. `JSON.parse` does not say where it
 * failed on every error, so this walks the text itself and names the exact offset.
 */
export function findJsonError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  // Keys and indexes of the values being read, so an error names its field like any other.
  const path: (string | number)[] = [];
  const stop = (message: string, hint: string, at = i): never => {
    throw new Stop({ offset: at, message, hint, path: [...path] });
  };
  const here = () => (i >= text.length ? "the end of the file" : `\`${text[i]}\``);
  const space = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  /** Fails on the character at i; comments and single quotes get their own words. */
  const unexpected = (expected: string, hint: string): never => {
    const c = text[i];
    if (c === "'") stop("a text in single quotes", "JSON texts and keys are written in double quotes");
    if (c === "/" || c === "#") stop("a comment", "JSON has no comments: remove it, or write the script as YAML");
    return stop(`expected ${expected}, got ${here()}`, hint);
  };
  const badValue = () => unexpected("a value", "a value is a text in double quotes, a number, true, false, null, a list [...] or a mapping {...}");
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) stop("a text in double quotes is not closed", 'add the closing "');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) stop("a line break or control character inside a text", "write a line break as \\n");
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else stop(`invalid escape \\${e ?? ""} in a text`, "in JSON a backslash starts an escape: write \\\\ for one backslash");
      } else i++;
    }
  };
  const sequence = (close: "]" | "}", item: (index: number) => void) => {
    i++;
    space();
    if (text[i] === close) {
      i++;
      return;
    }
    for (let index = 0; ; index++) {
      item(index);
      space();
      if (text[i] === close) {
        i++;
        return;
      }
      if (text[i] !== ",") unexpected(`\`,\` or \`${close}\``, `separate items with commas, and close with ${close}`);
      const comma = i;
      i++;
      space();
      if (text[i] === close) stop(`a comma before \`${close}\``, "JSON allows no comma after the last item: remove it", comma);
    }
  };
  // The walk recurses once per level: deeper input is refused before it can overflow the stack.
  let depth = 0;
  const value = (): void => {
    space();
    const c = text[i];
    if ((c === "{" || c === "[") && depth >= maxNestingDepth) {
      stop(`lists and mappings nest deeper than ${maxNestingDepth} levels here`, "a script needs about 9 levels: flatten the data");
    }
    if (c === "{") {
      depth++;
      sequence("}", () => {
        space();
        if (text[i] !== '"') unexpected("a key in double quotes", "JSON keys are written in double quotes");
        const start = i;
        string();
        path.push(JSON.parse(text.slice(start, i)) as string);
        space();
        if (text[i] !== ":") stop(`expected \`:\` after the key, got ${here()}`, "write the key, a colon, then the value");
        i++;
        value();
        path.pop();
      });
      depth--;
    } else if (c === "[") {
      depth++;
      sequence("]", (index) => {
        path.push(index);
        value();
        path.pop();
      });
      depth--;
    } else if (c === '"') string();
    else {
      const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
      m.lastIndex = i;
      const hit = m.exec(text);
      if (!hit) badValue();
      i += hit![0].length;
    }
  };
  try {
    value();
    space();
    if (i < text.length) stop(`more text after the end of the JSON value: ${here()}`, "a JSON script is one mapping {...}");
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return err.error;
    throw err;
  }
}
