// package.json ships what the library's entry reaches, and its exports point at built files:
// the quick form of .ci/run.d/35-package.sh, which packs and installs for real.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
  files: string[];
  exports: Record<string, string | Record<string, string>>;
  main: string;
  types: string;
};

describe("the package manifest", () => {
  it("ships the bundled library and CLI, and the types of every layer of src/ but the CLI's (no tsc output runs from the package)", () => {
    // upstream-recorder/ is the CLI's alone (modelstub record; the library does not reach it): it runs
    // from dist/bundle with the command. The library runs from dist/lib (rolldown.config.mjs).
    const cliOnly = new Set(["cli", "upstream-recorder"]);
    const layers = readdirSync(new URL("src/", root), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !cliOnly.has(e.name))
      .map((e) => `dist/src/${e.name}/**/*.d.ts`);
    expect(pkg.files).toEqual(
      expect.arrayContaining([...layers, "dist/src/index.d.ts", "dist/gen/**/*.d.ts", "dist/lib", "dist/bundle", "modelstub.schema.json"]),
    );
    expect(pkg.files.filter((f) => f.startsWith("dist/src") || f.startsWith("dist/gen")).every((f) => f.endsWith(".d.ts"))).toBe(true);
  });

  it("points main, types and every export at a file the build writes", () => {
    const targets = [pkg.main, pkg.types, ...Object.values(pkg.exports).flatMap((t) => (typeof t === "string" ? [t] : Object.values(t)))];
    for (const t of targets) expect(existsSync(new URL(t, root)), `${t} (run npm run build)`).toBe(true);
    expect(pkg.exports["./schema.json"]).toBe("./modelstub.schema.json");
  });
});
