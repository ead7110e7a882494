import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** One import statement of a source file: what it names, and whether it brings types only. */
export interface Import {
  spec: string;
  typeOnly: boolean;
}

const src = new URL("../../src/", import.meta.url).pathname;

/** src/, as an absolute path. */
export const srcDir = src;

/** Every .ts file under `dir`, absolute, in a stable order. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/**
 * The imports of a file: `import`/`export ... from` statements and `import("...")` expressions.
 * `import type` and `export type` statements are type-only (erased at build); an inline
 * `import("...")` in a type position is counted as a type-only import too.
 */
export function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const out: Import[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(import|export)(\s+type)?\s[^"';]*?from\s+["']([^"']+)["']/g))
    out.push({ spec: m[3]!, typeOnly: m[2] !== undefined });
  for (const m of text.matchAll(/(?<!\w)import\(\s*["']([^"']+)["']\s*\)/g)) out.push({ spec: m[1]!, typeOnly: true });
  return out;
}

/** A file's path under src/ (`engine/run-call.ts`). */
export function srcPath(file: string): string {
  return relative(src, file);
}

/** Where a relative import of `file` lands, as a path under src/ with a .ts ending (or outside src, starting with ..). */
export function resolveImport(file: string, spec: string): string {
  return relative(src, join(file, "..", spec)).replace(/\.js$/, ".ts");
}

/**
 * The cycles of a directed graph: each strongly connected component with more than one node (or
 * a node importing itself), as its nodes in a stable order. Tarjan's algorithm.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The import graph of src/: each file (path under src/) to the src files it imports. */
export function srcGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesUnder(src)) {
    const targets = importsOf(file)
      .filter((i) => i.spec.startsWith("."))
      .map((i) => resolveImport(file, i.spec))
      .filter((t) => !t.startsWith(".."));
    graph.set(srcPath(file), [...new Set(targets)]);
  }
  return graph;
}
