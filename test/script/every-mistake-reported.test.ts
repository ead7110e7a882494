import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { validate } from "../../src/cli/validate.js";

/*
 * Issue 31, item 2: a mistake the schema refuses (an unknown key, a wrong type, a misspelt
 * status code) does not hide the compiler's (template variables, regexes, chunks, actions,
 * duplicate models) in the parts that parsed. Every mistake of each file is one line.
 */

const dir = mkdtempSync(join(tmpdir(), "modelstub-every-mistake-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const codes =
  '"CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"';

/** Runs `modelstub validate` on a file of `text`: its exit code and stderr lines, the file's path cut to its name. */
async function validateText(name: string, text: string): Promise<{ code: number; lines: string[] }> {
  const file = join(dir, name);
  writeFileSync(file, text);
  let err = "";
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
  const code = await validate([file]);
  vi.restoreAllMocks();
  return {
    code,
    lines: err
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => l.replace(`${dir}/`, "")),
  };
}

describe("modelstub validate, on a file with several kinds of mistake", () => {
  it("reports a misspelt key and an unknown template variable of the same entry together (2 mistakes)", async () => {
    const { code, lines } = await validateText("two.yaml", 'entries:\n  - latncy: 250ms\n    reply: "{{last_usr}}"\n');
    expect(code).toBe(1);
    expect(lines).toEqual([
      "two.yaml:2:5: entries[0]: unknown key `latncy` (hint: did you mean `latency`?)",
      "two.yaml:3:13: entries[0].reply: unknown template variable {{last_usr}} (hint: did you mean {{last_user}}?)",
    ]);
  });

  it("reports a wrong default, a bad regex, chunks that do not join, a misplaced key and a misspelt code (4 entries, 5 lines)", async () => {
    const text = [
      "defaults:",
      "  chunking: lines",
      "entries:",
      '  - match: {regex: "(unclosed"}',
      "    reply: hi",
      '  - reply: {text: "ab", chunks: ["a", "c"]}',
      "    tool_calls: []",
      "  - error: {code: UNAVAILIBLE}",
      "",
    ].join("\n");
    const { code, lines } = await validateText("four.yaml", text);
    expect(code).toBe(1);
    expect(lines).toEqual([
      'four.yaml:2:13: defaults.chunking: expected one of "words", "none", got the text "lines" (hint: how the text is cut into stream chunks: words (default; each word with its following space), none (one chunk), or {chars: N})',
      "four.yaml:4:20: entries[0].match.regex: invalid regex: /(unclosed/: missing closing ) (hint: match.regex is a JavaScript regex: escape a literal ( ) [ ] { } . * + ? with a backslash)",
      'four.yaml:6:33: entries[1].reply.chunks: the chunks join to "ac", but the text is "ab" (hint: the chunks must concatenate exactly to the text (or leave text out: it is then the chunks joined))',
      "four.yaml:7:5: entries[1]: unknown key `tool_calls` (hint: `tool_calls` goes under `reply:`)",
      `four.yaml:8:19: entries[2].error.code: expected one of ${codes}, got the text "UNAVAILIBLE" (hint: did you mean "UNAVAILABLE"?)`,
    ]);
  });

  it("reports all 10 mistakes of a file that mixes schema and compiler mistakes across models, defaults, entries and steps", async () => {
    const text = [
      "models:",
      "  - id: a",
      "  - id: a",
      "defaults:",
      "  latency: fast",
      "entries:",
      "  - latncy: 250ms",
      '    reply: "{{last_usr}}"',
      '  - match: {regex: "(unclosed"}',
      "    reply: hi",
      "    tims: 2",
      "  - error: {code: UNAVAILIBLE}",
      '  - reply: {text: "ab", chunks: ["a", "c"]}',
      "steps:",
      "  act:",
      '    - reply: "{{match.3}}"',
      "      hang: true",
      "",
    ].join("\n");
    const { code, lines } = await validateText("ten.yaml", text);
    expect(code).toBe(1);
    expect(lines).toEqual([
      'ten.yaml:3:9: models[1].id: model "a" is declared twice: expected unique ids (hint: models[0] declares it first; rename or remove one)',
      'ten.yaml:5:12: defaults.latency: expected a duration like 250ms, 1.5s or 2m, got the text "fast" (hint: units are ms, s and m; a bare number is milliseconds)',
      "ten.yaml:7:5: entries[0]: unknown key `latncy` (hint: did you mean `latency`?)",
      "ten.yaml:8:13: entries[0].reply: unknown template variable {{last_usr}} (hint: did you mean {{last_user}}?)",
      "ten.yaml:9:20: entries[1].match.regex: invalid regex: /(unclosed/: missing closing ) (hint: match.regex is a JavaScript regex: escape a literal ( ) [ ] { } . * + ? with a backslash)",
      "ten.yaml:11:5: entries[1]: unknown key `tims` (hint: did you mean `times`?)",
      `ten.yaml:12:19: entries[2].error.code: expected one of ${codes}, got the text "UNAVAILIBLE" (hint: did you mean "UNAVAILABLE"?)`,
      'ten.yaml:13:33: entries[3].reply.chunks: the chunks join to "ac", but the text is "ab" (hint: the chunks must concatenate exactly to the text (or leave text out: it is then the chunks joined))',
      "ten.yaml:16:15: steps.act[0].reply: template uses {{match.3}} but the entry has no match.regex (hint: add match: {regex: ...} with a ( ) group; {{match.*}} reads its captures)",
      "ten.yaml:17:7: steps.act[0]: the entry has 2 actions (reply, hang): expected exactly one (hint: an entry answers one way: split it into one entry per action, or remove all but one)",
    ]);
  });

  it("finds the compiler's mistakes after an entry the schema refused whole, at the entries' own indexes", async () => {
    // entries[0] is no mapping: taken out, entries[1] is the compiler's first, and says so by
    // its own index. entries[2] loses its reply: "the entry has no action" would only echo that.
    const { lines } = await validateText("shifted.yaml", 'entries:\n  - 5\n  - reply: "{{last_usr}}"\n  - reply: 5\n');
    expect(lines).toEqual([
      "shifted.yaml:2:5: entries[0]: expected a mapping, got the number 5 (hint: one scripted answer)",
      "shifted.yaml:3:13: entries[1].reply: unknown template variable {{last_usr}} (hint: did you mean {{last_user}}?)",
      'shifted.yaml:4:12: entries[2].reply: expected a reply: a text, or a mapping with text, tool_calls, finish_reason, usage, chunks or chunking, got the number 5 (hint: quote it to make it a text: "5")',
    ]);
  });
});
