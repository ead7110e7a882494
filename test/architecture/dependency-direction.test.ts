import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { filesUnder, importsOf, resolveImport, srcDir, srcPath } from "./module-graph.js";

// The rooms of src/ and the rooms each may import from; imports only point down. shared is the
// floor (words every room speaks); wire is the hand-written protobuf codec, beside it, which
// knows only gen/ (the engine encodes episodes with it, the gRPC front frames and requests); the script language compiles text into a CompiledScript; the
// engine runs calls on one, knowing it only by its types; the transports (grpc, http, port,
// episode-files, and log beneath both servers) carry calls to and from the engine; the upstream recorder (modelstub
// record) serves the same fronts over a stub that forwards to a real model; the CLI and the
// library are two faces of the same transports, side by side: neither imports the other, so the
// package's API never drags in option parsing. src/index.ts, the package's entry, re-exports.
// docs/architecture.md draws this table; each folder's README.md says its own row.
const layers: Record<string, string[]> = {
  shared: [],
  wire: ["shared"],
  script: ["shared"],
  engine: ["shared", "script", "wire"],
  log: ["shared"],
  "episode-files": ["shared", "engine"],
  grpc: ["shared", "script", "engine", "log", "wire"],
  http: ["shared", "script", "engine", "log"],
  port: ["shared", "engine", "grpc"],
  // One server's start (the fronts over a stub) and graceful stop, composed by every face that serves.
  server: ["shared", "engine", "episode-files", "grpc", "http"],
  "upstream-recorder": ["shared", "script", "engine", "log", "grpc", "http", "port", "server"],
  // The crash-matrix runner (matrix run): a harness over ControlService, used by both faces.
  matrix: ["shared", "script", "engine", "log", "grpc", "http", "port", "server"],
  cli: ["shared", "script", "engine", "log", "episode-files", "grpc", "http", "port", "server", "upstream-recorder", "matrix"],
  library: ["shared", "script", "engine", "log", "episode-files", "grpc", "http", "port", "server", "matrix"],
  "index.ts": ["shared", "script", "engine", "port", "library", "matrix"],
};

/** The engine sees the script language through one door: the compiled script's types. */
const engineDoor = "script/compiled-script.ts";

/** Rooms that must run without a transport: they never import a transport library. */
const transportFree = ["shared", "wire", "script", "engine", "log"];
const transportPackages = ["@grpc/grpc-js", "@grpc/reflection", "node:http", "node:http2", "node:net"];

describe("the dependency direction", () => {
  for (const file of filesUnder(srcDir)) {
    const rel = srcPath(file);
    const layer = rel.split("/")[0]!;
    it(`${rel} imports only from layers below it`, () => {
      const allowed = layers[layer];
      expect(allowed, `unknown layer ${layer}: add it to the table`).toBeDefined();
      for (const { spec, typeOnly } of importsOf(file)) {
        if (spec.startsWith(".")) {
          const target = resolveImport(file, spec);
          const targetLayer = target.split("/")[0]!;
          if (targetLayer === layer || target.startsWith("..")) continue;
          expect(allowed, `${rel} imports ${spec}`).toContain(targetLayer);
          if (layer === "engine" && targetLayer === "script") {
            expect(target, `${rel} imports ${spec}: the engine may import only ${engineDoor}`).toBe(engineDoor);
            expect(typeOnly, `${rel} imports values from ${spec}: the engine imports the compiled script's types only (import type)`).toBe(true);
          }
        } else if (transportFree.includes(layer)) {
          expect(transportPackages, `${rel} imports the transport package ${spec}`).not.toContain(spec);
        }
      }
    });
  }
});

describe("each room of src/", () => {
  for (const room of Object.keys(layers).filter((l) => !l.endsWith(".ts"))) {
    it(`${room}/ opens with a README.md saying what it owns and exactly which rooms it may import`, () => {
      const readme = join(srcDir, room, "README.md");
      expect(existsSync(readme), `src/${room}/README.md is missing`).toBe(true);
      const line = readFileSync(readme, "utf8")
        .split("\n")
        .find((l) => l.startsWith("May import:"));
      expect(line, `src/${room}/README.md has no "May import:" line`).toBeDefined();
      const named = [...line!.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]!).sort();
      expect(named, `the "May import:" line of src/${room}/README.md`).toEqual([...layers[room]!].sort());
    });
  }

  // The rooms a newcomer walks most: their READMEs are their maps, so they name every file.
  for (const room of ["shared", "wire", "script", "engine"]) {
    it(`${room}/README.md names every file of the room`, () => {
      const readme = readFileSync(join(srcDir, room, "README.md"), "utf8");
      const files = filesUnder(join(srcDir, room)).map((f) => srcPath(f).slice(room.length + 1));
      expect(files.filter((f) => !readme.includes(`\`${f}\``) && !(f.startsWith("find-") && readme.includes("`find-*.ts`")))).toEqual([]);
    });
  }
});

describe("the wire room", () => {
  // The codec is the hot path of every call and the bytes of every episode: it reads the
  // generated descriptors (gen/) and shared/, nothing of the rooms that use it (the table above
  // holds it to that), so that what it writes depends on the .proto files alone
  // (test/wire/conformance.test.ts holds it to protobuf-es).
  const users = Object.entries(layers)
    .filter(([, allowed]) => allowed.includes("wire"))
    .map(([room]) => room)
    .sort();

  it("is imported by the engine and the gRPC front only", () => {
    expect(users).toEqual(["engine", "grpc"]);
  });
});
