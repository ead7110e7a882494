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
export const deepJson = (levels: number) => `{"entries": [{"reply": {"text": "x", "tool_calls": [{"name": "t", "arguments": ${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}]}}]}\n`;
/** Bytes that look like a compressed file: deterministic, full of control characters. */
export const binary = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7919 + (i >> 3) * 104729) % 256));
/** A script with `n` entries, each with the same misspelt key: short lines. */
export const manyMistakes = (n: number) => `entries:\n${Array.from({ length: n }, (_, i) => `  - { repy: "answer ${i}" }\n`).join("")}`;
/** A script with `n` entries, each with two long unknown keys: lines of about 450 characters. */
export const manyLongMistakes = (n: number) => `entries:\n${Array.from({ length: n }, (_, i) => `  - { ${"x".repeat(300)}${i}: 1, ${"y".repeat(300)}${i}: 2 }\n`).join("")}`;
