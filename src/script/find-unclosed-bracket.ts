import { Parser } from "yaml";

const pairs: Record<string, string> = { "[": "]", "{": "}" };

/** Offsets of every `[` and `{` that opens a flow collection, as the YAML parser read them. */
function flowOpeners(node: unknown, out: number[]): number[] {
  if (Array.isArray(node)) {
    for (const n of node) flowOpeners(n, out);
  } else if (node !== null && typeof node === "object") {
    const token = node as { type?: string; start?: { offset?: number } };
    if (token.type === "flow-collection" && typeof token.start?.offset === "number") out.push(token.start.offset);
    for (const v of Object.values(node)) if (v !== null && typeof v === "object") flowOpeners(v, out);
  }
  return out;
}

/**
 * Whether the bracket at `start` has its closing bracket somewhere after it. Texts in quotes
 * and comments are skipped; a closing bracket of the wrong kind closes what it matches further
 * out, leaving the brackets opened inside it unclosed.
 */
function isClosed(text: string, start: number): boolean {
  const stack = [text[start]!];
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    const before = text[i - 1]!;
    if (c === "#" && /\s/.test(before)) {
      const end = text.indexOf("\n", i);
      if (end < 0) return false;
      i = end;
    } else if ((c === '"' || c === "'") && /[\s[{,:]/.test(before)) {
      // A quoted text: "..." with backslash escapes, '...' with '' for a quote.
      for (i++; i < text.length; i++) {
        if (c === '"' && text[i] === "\\") i++;
        else if (text[i] === c && !(c === "'" && text[i + 1] === "'")) break;
        else if (c === "'" && text[i] === "'") i++;
      }
    } else if (c === "[" || c === "{") {
      stack.push(c);
    } else if (c === "]" || c === "}") {
      const at = stack.map((o) => pairs[o]).lastIndexOf(c);
      if (at === 0) return true;
      if (at > 0) stack.length = at;
    }
  }
  return false;
}

/**
 * The offset of the innermost `open` bracket (`[` or `{`) before `before` that is never
 * closed. The yaml library reports an unclosed flow collection where the text ends, as one
 * "not sufficiently indented"; a person needs to see where the bracket was opened.
 */
export function findUnclosedBracket(text: string, open: "[" | "{", before: number): number | undefined {
  const openers = flowOpeners([...new Parser().parse(text)], []).filter((o) => o < before && text[o] === open);
  return openers.sort((a, b) => b - a).find((o) => !isClosed(text, o));
}
