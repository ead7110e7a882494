import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const src = new URL("../../src/", import.meta.url).pathname;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^"']*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2]!);
}

// engine <- transports (grpc, http, port, record, log) <- cli and library: imports only point
// down this list. The CLI and the library are two faces of the same transports, side by side:
// neither imports the other, so the package's API never drags in option parsing, and the CLI
// never depends on what the library adds. src/index.ts, the package's entry, re-exports.
const layers: Record<string, string[]> = {
  engine: [],
  record: ["engine"],
  log: ["engine", "http"],
  grpc: ["engine", "log"],
  http: ["engine", "log"],
  port: ["engine", "grpc"],
  cli: ["engine", "grpc", "http", "port", "record", "log"],
  library: ["engine", "grpc", "http", "port", "record", "log"],
  "index.ts": ["library", "port", "engine"],
};
const transportPackages = ["@grpc/grpc-js", "@grpc/reflection", "node:http", "node:http2", "node:net"];

describe("the dependency direction", () => {
  for (const file of filesUnder(src)) {
    const rel = relative(src, file);
    const layer = rel.split("/")[0]!;
    it(`${rel} imports only from layers below it`, () => {
      const allowed = layers[layer];
      expect(allowed, `unknown layer ${layer}: add it to the table`).toBeDefined();
      for (const spec of importsOf(file)) {
        if (spec.startsWith(".")) {
          const target = relative(src, join(file, "..", spec)).split("/")[0]!;
          if (target === layer || target.startsWith("..")) continue;
          expect(allowed, `${rel} imports ${spec}`).toContain(target);
        } else if (layer === "engine") {
          expect(transportPackages, `the engine imports the transport package ${spec}`).not.toContain(spec);
        }
      }
    });
  }
});
