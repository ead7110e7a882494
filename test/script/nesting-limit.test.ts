import { LineCounter, parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import { findTooDeep } from "../../src/script/check-structure.js";
import { parseYamlBounded } from "../../src/script/parse-yaml-bounded.js";
import { maxNestingDepth } from "../../src/script/script-limits.js";

/*
 * Issue 27, item 1: nesting is now refused while the text is tokenized (parse-yaml-bounded.ts),
 * before yaml's recursive composer runs. That read must never refuse what the document check
 * (findTooDeep on the composed document, as before) accepts, in any style of nesting, and must
 * refuse at the same place where both see the same levels.
 */

/** `levels` nested collections in one style, each level with a sibling after it, around `x`. */
const styles: Record<string, (levels: number) => string> = {
  "block mappings by indentation": (n) => {
    let text = "";
    for (let i = 0; i < n; i++) text += `${"  ".repeat(i)}k${i}:\n`;
    text += `${"  ".repeat(n)}x\n`;
    for (let i = n - 1; i >= 0; i--) text += `${"  ".repeat(i)}s${i}: 1\n`;
    return text;
  },
  "block sequences by indentation": (n) => {
    let text = "";
    for (let i = 0; i < n; i++) text += `${"  ".repeat(i)}-\n`;
    text += `${"  ".repeat(n)}x\n`;
    for (let i = n - 1; i >= 0; i--) text += `${"  ".repeat(i)}- 1\n`;
    return text;
  },
  "sequences at their mapping's indentation": (n) => {
    let text = "";
    for (let i = 0; i < n; i++) text += i % 2 === 0 ? `${"  ".repeat(i / 2)}k${i}:\n` : `${"  ".repeat((i - 1) / 2)}-\n`;
    return `${text}${"  ".repeat(Math.ceil(n / 2))}x\n`;
  },
  "compact sequences": (n) => `${"- ".repeat(n)}x\n${"  ".repeat(n - 1)}- y\n- z\n`,
  "compact explicit keys": (n) => `${"? ".repeat(n)}x\n`,
  "flow sequences": (n) => `${"[".repeat(n)}x${"], 1".repeat(n - 1)}]\n`,
  "flow mappings": (n) => `${"{a: ".repeat(n)}x${"}, b: 1".repeat(n - 1)}}\n`,
  "pairs in flow sequences (two levels each)": (n) => `${"[a: ".repeat(Math.ceil(n / 2))}x${"]".repeat(Math.ceil(n / 2))}\n`,
  "flow inside block": (n) =>
    `${Array.from({ length: Math.floor(n / 2) }, (_, i) => `${"  ".repeat(i)}k${i}:\n`).join("")}${"  ".repeat(Math.floor(n / 2))}${"[".repeat(n - Math.floor(n / 2))}x${"]".repeat(n - Math.floor(n / 2))}\n`,
};

function bothChecks(text: string): { before: number | undefined; now: number | undefined } {
  const before = findTooDeep(parseDocument(text, { prettyErrors: false, uniqueKeys: true, strict: true }))?.offset;
  const parsed = parseYamlBounded(text, { lineCounter: new LineCounter(), uniqueKeys: true, strict: true });
  const now = "tooDeep" in parsed ? parsed.tooDeep.offset : findTooDeep(parsed.doc)?.offset;
  return { before, now };
}

describe("the nesting limit, checked while the text is read", () => {
  it.each(Object.keys(styles))("agrees with the check of the composed document on %s, 60 to 70 levels", (style) => {
    for (let levels = maxNestingDepth - 4; levels <= maxNestingDepth + 6; levels++) {
      const text = styles[style]!(levels);
      const { before, now } = bothChecks(text);
      expect(now === undefined, `${levels} levels: refused ${now !== undefined ? "now" : "before"} only`).toBe(before === undefined);
      expect(now, `${levels} levels: the place refused`).toBe(before);
    }
  });

  it("accepts exactly 64 levels and refuses 65, in block and flow style", () => {
    for (const style of ["block mappings by indentation", "compact sequences", "flow sequences", "flow mappings"]) {
      expect(bothChecks(styles[style]!(maxNestingDepth)).now, style).toBeUndefined();
      expect(bothChecks(styles[style]!(maxNestingDepth + 1)).now, style).toBeDefined();
    }
  });
});
