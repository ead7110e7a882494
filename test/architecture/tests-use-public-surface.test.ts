import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { filesUnder, srcDir } from "./module-graph.js";
import { importStatements, indexFile, isInternal, originOf, publicAsIs, unexported, type ImportStatement } from "./public-surface.js";

// Issue 34, item 9: a test of public behaviour goes through the package's public surface,
// src/index.ts. A test may import an internal module of src/ for what the index does not
// export (the unit is the point); an import that brings in only names the index exports, as
// the same bindings, could have come from the index, and must. public-surface.ts reads the
// index's `export { ... } from`, `export type` and `export *` lines and follows each name to
// where it is declared, so a name is public only under the name the index gives it.

const testDir = new URL("../", import.meta.url).pathname;
const gen = new URL("../../gen/modelstub/v1/", import.meta.url).pathname;
const src = (path: string) => join(srcDir, path);

/** What an import brings in, as its statement spells it (`Code, type ModelPort`). */
const spelled = (imp: ImportStatement) => imp.names!.map((n) => (n.typeOnly ? `type ${n.name}` : n.name)).join(", ");

/** The imports of test/ that name an internal module of src/ and could have named the index. */
function couldBePublic(files: string[]): string[] {
  return files.flatMap((file) =>
    importStatements(file)
      .filter((imp) => isInternal(imp.module) && imp.names !== undefined && imp.names.length > 0 && unexported(imp).length === 0)
      .map(
        (imp) =>
          `test/${relative(testDir, file)}:${imp.line} imports ${spelled(imp)} from ${imp.spec}: src/index.ts exports ${imp.names!.length > 1 ? "them all" : "it"}, import from there`,
      ),
  );
}

describe("the tests and the package's public surface", () => {
  const files = filesUnder(testDir);

  it("import from src/index.ts whatever it exports: no import of an internal module brings in only public names", () => {
    const internal = files.flatMap((f) => importStatements(f)).filter((imp) => isInternal(imp.module));
    expect(internal.length, "imports of internal modules seen (none: the reading of test/ is broken)").toBeGreaterThan(100);
    expect(couldBePublic(files)).toEqual([]);
  });

  it("still import what the index does not export from where it lives: the unit is the point", () => {
    const kept = files.flatMap((f) => importStatements(f)).filter((imp) => isInternal(imp.module) && unexported(imp).length > 0);
    expect(kept.length).toBeGreaterThan(100);
  });
});

describe("the reading of src/index.ts", () => {
  it("follows `export { ... } from`: Code of shared/status-code.ts is public, codeName beside it is not", () => {
    expect(publicAsIs(src("shared/status-code.ts"), { name: "Code", typeOnly: false })).toBe(true);
    expect(publicAsIs(src("shared/status-code.ts"), { name: "codeName", typeOnly: false })).toBe(false);
  });

  it("follows an import passed on by `export type { ... }`: MatrixPosition of script/crash-matrix.ts, through library/crash-matrix.ts", () => {
    expect(publicAsIs(src("script/crash-matrix.ts"), { name: "MatrixPosition", typeOnly: true })).toBe(true);
    expect(originOf(src("library/crash-matrix.ts"), "MatrixPosition")?.binding).toBe(originOf(src("script/crash-matrix.ts"), "MatrixPosition")?.binding);
  });

  it("follows `export *`: EpisodeSchema of gen/, through library/proto.ts", () => {
    expect(publicAsIs(`${gen}episode_pb.ts`, { name: "EpisodeSchema", typeOnly: false })).toBe(true);
    expect(publicAsIs(src("library/proto.ts"), { name: "Role", typeOnly: false })).toBe(true);
  });

  it("knows a renamed export only by its exported name: ExpectationsInput is public as MatrixExpectations", () => {
    const expectations = src("matrix/expectations.ts");
    expect(publicAsIs(expectations, { name: "ExpectationsInput", typeOnly: true })).toBe(false);
    expect(originOf(indexFile, "MatrixExpectations")?.binding).toBe(originOf(expectations, "ExpectationsInput")?.binding);
  });

  it("tells two bindings of one name apart: runMatrix of matrix/run-matrix.ts is not the index's (library/run-matrix.ts)", () => {
    expect(originOf(indexFile, "runMatrix")).toBeDefined();
    expect(publicAsIs(src("matrix/run-matrix.ts"), { name: "runMatrix", typeOnly: false })).toBe(false);
    expect(publicAsIs(src("library/run-matrix.ts"), { name: "runMatrix", typeOnly: false })).toBe(true);
  });

  it("offers an `export type` name to a type import only", () => {
    expect(publicAsIs(src("script/compiled-script.ts"), { name: "CompiledScript", typeOnly: true })).toBe(true);
    expect(publicAsIs(src("script/compiled-script.ts"), { name: "CompiledScript", typeOnly: false })).toBe(false);
  });

  it("counts a namespace import as bringing in the whole module: never public as is", () => {
    const imp: ImportStatement = { file: "x.ts", module: src("shared/status-code.ts"), spec: "../../src/shared/status-code.js", line: 1, names: undefined };
    expect(unexported(imp)).toEqual(["*"]);
  });
});
