import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/*
 * docs/http.md's "Clients checked in CI" table against the pins: every version a row names is the
 * one package.json (TypeScript rows) or test/interop/python/requirements-dialects.txt (Python
 * rows) pins, and every test a row names exists.
 */

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");

function rows(): string[][] {
  const page = read("docs/http.md");
  const start = page.indexOf("| Client | Language | Version pinned |");
  expect(start).toBeGreaterThan(0);
  const out: string[][] = [];
  for (const row of page.slice(start).split("\n").slice(2)) {
    if (!row.startsWith("|")) break;
    out.push(
      row
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return out;
}

const pkg = JSON.parse(read("package.json")) as { devDependencies: Record<string, string> };
const python = new Map(
  read("test/interop/python/requirements-dialects.txt")
    .split("\n")
    .filter((l) => /^[A-Za-z]/.test(l))
    .map((l) => l.split("==") as [string, string]),
);

describe("docs/http.md's Clients checked in CI", () => {
  it("names the pinned version of every client it lists, and tests that exist", () => {
    const table = rows();
    expect(table.length).toBeGreaterThanOrEqual(13);
    for (const [client, language, versions, , , tests] of table) {
      const pins = language === "Python" ? (name: string) => python.get(name) : (name: string) => pkg.devDependencies[name];
      // "1.6.0 (`@langchain/core` 1.4.0)": a bare first version is the client's own (its first `name`).
      const named = [...versions!.matchAll(/`([^`]+)` (\d+\.\d+\.\d+)/g)].map((m) => [m[1]!, m[2]!]);
      const bare = /^(\d+\.\d+\.\d+)/.exec(versions!);
      if (bare) named.push([/`([^`]+)`/.exec(client!)![1]!, bare[1]!]);
      expect(named.length, client).toBeGreaterThan(0);
      for (const [name, version] of named) expect(`${name} ${pins(name!)}`, `${client} (${language})`).toBe(`${name} ${version}`);
      let dir = "";
      for (const test of tests!.split(", ")) {
        if (test.includes("/")) dir = test.slice(0, test.lastIndexOf("/") + 1);
        expect(existsSync(new URL(`../../${test.includes("/") ? test : dir + test}`, import.meta.url)), test).toBe(true);
      }
    }
  });
});
