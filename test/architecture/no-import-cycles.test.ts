import { describe, expect, it } from "vitest";
import { findCycles, srcGraph } from "./module-graph.js";

describe("the import graph of src/", () => {
  it("has no cycles: no file imports, through any chain, a file that imports it", () => {
    const graph = srcGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(findCycles(graph)).toEqual([]);
  });

  it("would be caught with a cycle in it: the check finds a two-file and a three-file loop and a self-import", () => {
    const graph = new Map<string, string[]>([
      ["script/compile-script.ts", ["shared/split-chunks.ts", "script/compile-template.ts"]],
      ["shared/split-chunks.ts", ["script/compile-script.ts"]],
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["self.ts", ["self.ts"]],
      ["script/compile-template.ts", []],
    ]);
    expect(findCycles(graph)).toEqual(expect.arrayContaining([["script/compile-script.ts", "shared/split-chunks.ts"], ["a.ts", "b.ts", "c.ts"], ["self.ts"]]));
    expect(findCycles(graph)).toHaveLength(3);
  });
});
