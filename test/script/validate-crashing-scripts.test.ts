import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maxScriptBytes } from "../../src/script/script-limits.js";
import { runCli } from "../support/run-cli.js";
import { aliasBomb, binary, deepBrackets, deepJson, fixtures, manyMistakes } from "./script-limits-fixture.js";

// Issue 12, the script side, through `modelstub validate`: see script-limits-fixture.ts.

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "modelstub-limits-"));
  writeFileSync(join(dir, "deep.json"), deepJson(5000));
  writeFileSync(join(dir, "binary.yaml"), binary(20_000));
  writeFileSync(join(dir, "deep-brackets.yaml"), deepBrackets(250_000));
  writeFileSync(join(dir, "deep-plan.yaml"), deepBrackets(2000, "rules: "));
  writeFileSync(join(dir, "mistakes.yaml"), manyMistakes(500));
  writeFileSync(join(dir, "tags.yaml"), 'entries:\n  - match: {contains: "hi"}\n    reply: !!binary aGVsbG8=\n  - reply: !!str 123\n    latency: !slow 5ms\n');
  writeFileSync(join(dir, "backtracking.yaml"), "entries:\n  - match: { regex: '^(a+)+$' }\n    reply: only a's\n");
  // 50 MB that take no disk: the loader must refuse it by its size, without reading it.
  writeFileSync(join(dir, "huge.yaml"), "");
  truncateSync(join(dir, "huge.yaml"), 50 * 1024 * 1024);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** No crash: no exit 70, no "internal error", no stack frame. */
function expectNoCrash(stderr: string): void {
  expect(stderr).not.toMatch(/internal error|\n\s+at |RangeError|ReferenceError|FATAL ERROR/);
}

describe("modelstub validate on scripts that crashed it", () => {
  it("refuses an alias bomb with the line of the alias that goes too far", async () => {
    const r = await runCli(["validate", aliasBomb]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `${aliasBomb}:6:8: f[0]: the aliases stand for more than 524288 characters (512 KiB) of script together: an alias bomb? (hint: each alias repeats its anchor's value, aliases inside that value included: use fewer or smaller aliases, or write the values out)\n`,
    );
  });

  it("refuses an alias without an anchor", async () => {
    const file = `${fixtures}/yaml-unresolved-alias.yaml`;
    const r = await runCli(["validate", file]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `${file}:2:14: entries[0].latency: the alias *slow has no anchor &slow before it (hint: put &slow before the value to repeat, above this alias (like \`latency: &slow 250ms\`), or check the spelling)\n`,
    );
  });

  // Found by the fuzz suite (seed 1592594962): `!!binary` made a Uint8Array that the repair
  // of what the schema refused could not edit ("Cannot delete property '0'").
  it("refuses values tagged as what a script cannot hold (bytes, a tag of its own), and keeps !!str", async () => {
    const file = join(dir, "tags.yaml");
    const r = await runCli(["validate", file]);
    expectNoCrash(r.stderr);
    expect(r.stderr).not.toMatch(/TypeError|bug in modelstub/);
    expect(r.code).toBe(1);
    const hint = "(hint: a script holds texts, numbers, true or false, null, lists and mappings: remove the tag (quote the value to keep it as a text))";
    expect(r.stderr).toBe(
      `${file}:3:12: entries[0].reply: the YAML tag \`!!binary\` makes a value a script cannot hold ${hint}\n` +
        `${file}:5:14: entries[1].latency: the YAML tag \`!slow\` makes a value a script cannot hold ${hint}\n`,
    );
  });

  it("refuses JSON nested 5,000 deep (30 KB) at the first level too deep", async () => {
    const r = await runCli(["validate", join(dir, "deep.json")]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /deep\.json:1:370: entries\[0\]\.reply\.tool_calls\[0\]\.arguments(\.a){58}: lists and mappings nest deeper than 64 levels here \(hint: a script needs about 9 levels/,
    );
    expect(r.stderr.split("\n")).toHaveLength(2);
  });

  // Issue 27: it aborted (exit 134, "RegExpCompiler Allocation failed") deep in yaml's composer.
  it("refuses 250,000 brackets (488 KB) at the 65th, each time, exiting 1, and so does session load, sending nothing", async () => {
    const file = join(dir, "deep-brackets.yaml");
    // Twice: the second aborted the process, as the third LoadScript aborted a server.
    const r = await runCli(["validate", file, file]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    const line = `${file}:1:65: ${"[0]".repeat(64)}: lists and mappings nest deeper than 64 levels here (hint: a script needs about 9 levels: flatten the data (tool call arguments can also be a JSON text))\n`;
    expect(r.stderr).toBe(line + line);
    // `session load` checks the file as validate does before it connects: the port is never dialled.
    const load = await runCli(["session", "load", "s", file, "--addr", "127.0.0.1:9"]);
    expect(load.code).toBe(1);
    expect(load.stderr).toBe(line);
  });

  it("refuses a fault plan of 2,000 brackets in `session faults`, before sending it", async () => {
    const file = join(dir, "deep-plan.yaml");
    const r = await runCli(["session", "faults", "s", file, "--addr", "127.0.0.1:9"]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/deep-plan\.yaml:1:71: rules(\[0\]){63}: lists and mappings nest deeper than 64 levels here \(hint: /);
  });

  it("refuses a binary file with one line naming its first control character", async () => {
    const r = await runCli(["validate", join(dir, "binary.yaml")]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /binary\.yaml:1:\d+: the script holds the control character U\+00[01][0-9A-F]: a script is text.*\(hint: .*a binary file is not a script\)\n$/,
    );
    expect(r.stderr.split("\n")).toHaveLength(2);
  });

  it("refuses a 50 MB script by its size, before reading it", async () => {
    const file = join(dir, "huge.yaml");
    const r = await runCli(["validate", file]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `${file}:1:1: the script is 52428800 bytes; the most is ${maxScriptBytes} (512 KiB), so it was not parsed (hint: split it into smaller scripts (each session loads its own with LoadScript): parsing takes about a second per MB)\n`,
    );
  });

  it.skipIf(process.platform === "win32")("stops reading a file that never ends (/dev/zero) past the limit", async () => {
    const r = await runCli(["validate", "/dev/zero"]);
    expectNoCrash(r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^\/dev\/zero:1:1: the script is more than 524288 bytes; the most is 524288 \(512 KiB\), so it was not parsed \(hint: /);
  });

  it("lists the first 20 of 500 problems and counts the rest", async () => {
    const r = await runCli(["validate", join(dir, "mistakes.yaml")]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(21);
    expect(lines[0]).toBe(`${join(dir, "mistakes.yaml")}:2:7: entries[0]: unknown key \`repy\` (hint: did you mean \`reply\`?)`);
    expect(lines[20]).toBe("... and 480 more problems (first 20 shown)");
  });

  it("accepts ^(a+)+$: matching runs in linear time, so it cannot stall anything", async () => {
    const r = await runCli(["validate", join(dir, "backtracking.yaml")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("refuses a backreference, saying why and how to do without", async () => {
    const file = `${fixtures}/regex-backreference.yaml`;
    const r = await runCli(["validate", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${file}:2:21: entries[0].match.regex: invalid regex: \\1 is a backreference, which matching cannot run in linear time (hint: match.regex runs on a linear-time engine (RE2)`,
    );
  });
});
