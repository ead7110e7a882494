import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { srcDir } from "./module-graph.js";

const testDir = new URL("../", import.meta.url).pathname;
const dirs = (path: string) =>
  readdirSync(path, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

/** The theme folders test/README.md lists in its table. */
function themes(): string[] {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  return [...readme.matchAll(/^\| `([a-z-]+)\/` \|/gm)].map((m) => m[1]!);
}

describe("the layout of test/", () => {
  it("has a folder per room of src/ or per theme test/README.md lists, and nothing else", () => {
    const rooms = dirs(srcDir);
    const listed = themes();
    expect(listed.length).toBeGreaterThan(5);
    for (const dir of dirs(testDir)) {
      expect(rooms.includes(dir) || listed.includes(dir), `test/${dir}/ is neither a room of src/ nor a theme in test/README.md`).toBe(true);
    }
  });

  it("keeps every test in a folder: none at the top of test/", () => {
    const loose = readdirSync(testDir).filter((f) => f.endsWith(".test.ts"));
    expect(loose).toEqual([]);
  });

  it("names no theme after a room of src/: a room's tests live in the room's folder", () => {
    const rooms = dirs(srcDir);
    expect(themes().filter((t) => rooms.includes(t))).toEqual([]);
  });
});
