import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url).pathname;
const maxLines = 250;
const code = /\.(ts|mts|mjs|cjs|js|sh|go|rs|py)$/;
/** Generated, installed or built: not ours to keep short. */
const skipped = /^(gen|node_modules|dist)\/|(^|\/)(\.build|\.cache|target|\.venv)\//;

/** The repository's code files: git's list when this is a clone, else a walk of the tree. */
function codeFiles(): string[] {
  let files: string[];
  try {
    files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).split("\n");
  } catch {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [relative(root, join(dir, e.name))]));
    files = walk(root);
  }
  // git lists a file deleted from the work tree until the deletion is staged: keep what exists.
  return files.filter((f) => code.test(f) && !skipped.test(f) && existsSync(join(root, f))).sort();
}

describe("file length", () => {
  it(`keeps every code file under ${maxLines} lines, or says at its top why it is longer`, () => {
    const files = codeFiles();
    expect(files.length).toBeGreaterThan(100);
    const unexplained = files.filter((f) => {
      const lines = readFileSync(join(root, f), "utf8").split("\n");
      if (lines.length - 1 <= maxLines) return false;
      return !lines.slice(0, 15).some((l) => /longer than 250 lines because/i.test(l));
    });
    expect(unexplained, `files over ${maxLines} lines with no "longer than 250 lines because ..." in their first 15 lines`).toEqual([]);
  });
});
