import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { corpus, loadError, pathOf } from "./bad-scripts-fixture.js";

describe("loadScriptFile() on the bad-scripts corpus", () => {
  it("has a pinned message for every fixture, and at least 30 fixtures", () => {
    const files = readdirSync(fileURLToPath(new URL("../fixtures/bad-scripts", import.meta.url))).sort();
    expect(corpus.map(([name]) => name).sort()).toEqual(files);
    expect(files.length).toBeGreaterThanOrEqual(30);
  });

  it.each(corpus)("rejects %s with the pinned message", async (name, ...lines) => {
    const err = await loadError(pathOf(name));
    const shown = lines.map((l) => `${pathOf(name)}:${l}`);
    expect(err.code).toBe("ERR_MODELSTUB_SCRIPT");
    expect(err.message).toBe(`cannot load script ${shown.join("\n")}`);
  });

  it("gives every issue a line, a column and a hint, one line each", async () => {
    for (const [name] of corpus) {
      const err = await loadError(pathOf(name));
      for (const issue of err.issues) {
        expect(issue.line, name).toBeGreaterThan(0);
        expect(issue.column, name).toBeGreaterThan(0);
        expect(issue.hint, name).toBeTruthy();
        expect(`${issue.path}${issue.message}${issue.hint}`, name).not.toContain("\n");
      }
    }
  });

  it("prints no Node warning while rejecting an unquoted {{variable}}", async () => {
    const warn = vi.spyOn(process, "emitWarning");
    await loadError(pathOf("unquoted-template-in-arguments.yaml"));
    expect(warn).not.toHaveBeenCalled();
    vi.restoreAllMocks();
  });

  it("names a missing file without a line", async () => {
    const err = await loadError(pathOf("no-such-script.yaml"));
    expect(err.message).toBe(
      `cannot load script ${pathOf("no-such-script.yaml")}: cannot read the file: no such file (hint: check the path; a relative path starts from the current directory)`,
    );
  });
});
