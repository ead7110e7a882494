/*
 * Issue 12, the script side: scripts that crashed the loader (exit 70 with a stack trace,
 * INTERNAL from LoadScript), a regex that froze every session, scripts that loaded and then
 * failed every call, and error messages too big to deliver. Each must now be an ordinary load
 * error with file, line, field and a fix, or (the regex) simply run in linear time. No test here
 * measures time: a catastrophic case would not finish at all, and the test times out.
 */

/** The bad-scripts corpus, relative to the repository (where the tests run the CLI). */
export const fixtures = "test/fixtures/bad-scripts";

/** 9 levels of 9 aliases: a few lines that stand for 387,420,489 texts. */
export const aliasBomb = `${fixtures}/yaml-alias-bomb.yaml`;
export const deepJson = (levels: number) =>
  `{"entries": [{"reply": {"text": "x", "tool_calls": [{"name": "t", "arguments": ${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}]}}]}\n`;
/** Bytes that look like a compressed file: deterministic, full of control characters. */
export const binary = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7919 + (i >> 3) * 104729) % 256));
/** A script with `n` entries, each with the same misspelt key: short lines. */
export const manyMistakes = (n: number) => `entries:\n${Array.from({ length: n }, (_, i) => `  - { repy: "answer ${i}" }\n`).join("")}`;
/** A script with `n` entries, each with two long unknown keys: lines of about 450 characters. */
export const manyLongMistakes = (n: number) =>
  `entries:\n${Array.from({ length: n }, (_, i) => `  - { ${"x".repeat(300)}${i}: 1, ${"y".repeat(300)}${i}: 2 }\n`).join("")}`;

/*
 * Issue 27: texts nested so deep that yaml's recursive composer crashed the process
 * ("RegExpCompiler Allocation failed - process out of memory") or took a second to refuse them.
 * Each nests one level per two characters or fewer; all are refused at the 65th level.
 */

/** `prefix` and then `levels` brackets opened and closed: 4 KB for 2,000 levels. */
export const deepBrackets = (levels: number, prefix = "") => `${prefix}${"[".repeat(levels)}${"]".repeat(levels)}`;
/** Block sequences in one line, `- - - x`: a level per two characters. */
export const compactSequences = (levels: number) => `entries:\n  ${"- ".repeat(levels)}x\n`;
/** Explicit keys in one line, `? ? ? x`. */
export const compactKeys = (levels: number) => `${"? ".repeat(levels)}x\n`;
/** Mappings by indentation alone: a key per line, each indented one more. */
export const indentedMappings = (levels: number) => `${Array.from({ length: levels }, (_, i) => `${" ".repeat(i)}a:`).join("\n")} x\n`;
/**
 * `links` anchored values in a tool call's arguments, each `levels` deep around an alias to the
 * one before: each valid alone, thousands of levels once the aliases are put in place.
 */
export const aliasChain = (links: number, levels: number) =>
  `entries:\n  - reply:\n      tool_calls:\n        - name: t\n          arguments:\n${Array.from(
    { length: links },
    (_, i) => `            a${i}: &a${i} ${"[".repeat(levels)}${i === 0 ? "x" : `*a${i - 1}`}${"]".repeat(levels)}\n`,
  ).join("")}`;
