import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/** The `## name` section of docs/cli.md, up to the next `## `. */
function section(page: string, name: string): string {
  const start = page.indexOf(`\n## ${name}\n`);
  expect(start, `docs/cli.md has a "## ${name}" section`).toBeGreaterThanOrEqual(0);
  const end = page.indexOf("\n## ", start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

describe("docs/cli.md, the CLI reference", { timeout: testTimeoutMs(60_000) }, () => {
  it("has a section for every command `modelstub --help` lists, each in the contents", async () => {
    const page = await readFile(join(repoRoot, "docs/cli.md"), "utf8");
    const help = (await runCli(["--help"])).stdout;
    const commands = [...help.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
    expect(commands).toEqual(expect.arrayContaining(["serve", "validate", "schema", "health", "episode", "session"]));
    for (const c of commands) {
      section(page, c);
      expect(page, `the contents link ${c}`).toContain(`- [${c}](#${c})`);
    }
  });

  it("documents every option that a command's --help lists, in that command's section", async () => {
    const page = await readFile(join(repoRoot, "docs/cli.md"), "utf8");
    for (const c of ["serve", "health", "episode", "session", "matrix run"]) {
      const help = (await runCli([...c.split(" "), "--help"])).stdout;
      const flags = [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!);
      expect(flags.length, c).toBeGreaterThan(0);
      const text = section(page, c === "matrix run" ? "matrix" : c);
      for (const flag of flags) expect(text, `${c} ${flag}`).toMatch(new RegExp(`\\| \`${flag}[ \`]`));
    }
  });

  it("names every session subcommand that `modelstub session --help` lists", async () => {
    const page = await readFile(join(repoRoot, "docs/cli.md"), "utf8");
    const help = (await runCli(["session", "--help"])).stdout;
    const subcommands = [...help.matchAll(/^ {2}(list|load|faults|reset|verify|watch|delete)\b/gm)].map((m) => m[1]!);
    expect(subcommands).toEqual(["list", "load", "faults", "reset", "verify", "watch", "delete"]);
    for (const s of subcommands) expect(section(page, "session")).toContain(`| \`session ${s}`);
  });
});
