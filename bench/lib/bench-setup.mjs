// The bench's set-up (payloads, tools, what is available) and the results object the sections fill.
import fs from "node:fs";
import os from "node:os";
import { writePayloadFile, ensureProtoset } from "./payloads.mjs";
import { BENCH_DIR, DIST_MAIN, MODELSTUB_BIN, REPO_DIR } from "./paths.mjs";
import { round } from "./stats.mjs";
import { findNpmPeer, findTool } from "./tools.mjs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { argv, cfg, log, MODELSTUB_READY, only, quick, TARGETS } from "./bench-config.mjs";

// ---------------------------------------------------------------------------------------------
// Set-up: payloads, tools, what is available.

export const t0 = Date.now();
ensureProtoset();
export const payloads = await writePayloadFile();
export const ghz = findTool("ghz");
/**
 * GripMock, the gRPC peer (issue 33, item 4): a full run builds it from source when it is not
 * installed, so every full run measures against it. When that cannot be done (no mirror of its
 * sources, the Go module proxy refusing a module), the report says so in its first lines and its
 * targets count as not measured, never as passed.
 */
export const gripmockBuild = { tried: false, ok: false, reason: "" };
export const gripmock = findTool("gripmock") ?? (quick || argv["no-gripmock-build"] ? null : buildGripmock());

function buildGripmock() {
  gripmockBuild.tried = true;
  const logFile = path.join(REPO_DIR, ".cache", "build-gripmock.log");
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  log(`GripMock is not installed: building it from source (bench/peer/build-gripmock.sh, log in ${path.relative(process.cwd(), logFile)})`);
  const r = spawnSync("bash", [path.join(BENCH_DIR, "peer", "build-gripmock.sh")], {
    encoding: "utf8",
    timeout: 15 * 60_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
  fs.writeFileSync(logFile, `${r.stdout ?? ""}${r.stderr ?? ""}`);
  const found = r.status === 0 ? findTool("gripmock") : null;
  if (found) {
    gripmockBuild.ok = true;
    return found;
  }
  const lastLine = `${r.stderr ?? ""}`.trim().split("\n").at(-1) || (r.error ? r.error.message : `exit ${r.status ?? r.signal}`);
  gripmockBuild.reason = lastLine;
  return null;
}
export const mockLlm = findNpmPeer("mock-llm");
export const modelstubBuilt = fs.existsSync(MODELSTUB_BIN) && (process.env.MODELSTUB_BIN ? true : fs.existsSync(DIST_MAIN));
export let loadgen = argv.loadgen === "auto" ? (ghz ? "ghz" : "node") : argv.loadgen;
if (loadgen === "ghz" && !ghz) {
  log("ghz is not installed (bench/install-tools.sh): falling back to the Node load generator");
  loadgen = "node";
}
export const notes = [];
if (!ghz) notes.push("ghz not installed: unary load used the Node load generator (run bench/install-tools.sh)");
if (!gripmock && gripmockBuild.tried)
  notes.push(`GripMock could not be built (${gripmockBuild.reason}; .cache/build-gripmock.log): its targets are not measured`);
else if (!gripmock)
  notes.push(
    "GripMock not installed: peer skipped (bench/install-tools.sh, or bench/peer/build-gripmock.sh to build it from source where the Go module proxy refuses github.com/bavix/gripmock/v3)",
  );
if (!mockLlm && only.has("http"))
  notes.push(
    "mock-llm not installed: the http section measured modelstub against the HTTP floor only (bench/install-tools.sh installs @dwmkerr/mock-llm@0.1.29 into .cache/peers/mock-llm)",
  );
else if (mockLlm && mockLlm.version !== mockLlm.pinned)
  notes.push(`mock-llm ${mockLlm.version} installed, ${mockLlm.pinned} pinned: rerun bench/install-tools.sh`);
if (!modelstubBuilt) notes.push("modelstub not built (dist/src/cli/main.js missing): modelstub measurements skipped; run `npm run build`");

export const results = {
  meta: {
    date: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    rounds: cfg.rounds,
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadavgAtStart: os.loadavg().map((x) => round(x)),
    loadgen: loadgen === "ghz" ? `ghz ${ghz.version}` : "node-loadgen (bench/load/loadgen.mjs, @grpc/grpc-js client)",
    streamLoadgen: "node-loadgen",
    ghz: ghz ? { version: ghz.version, pinned: ghz.pinned, bin: ghz.bin } : null,
    gripmockBuild: gripmockBuild.tried ? { ...gripmockBuild } : null,
    gripmock: gripmock
      ? { version: gripmock.version, pinned: gripmock.pinned, bin: gripmock.bin, ...(gripmock.commit ? { commit: gripmock.commit } : {}) }
      : null,
    mockLlm: mockLlm ? { package: mockLlm.package, version: mockLlm.version, pinned: mockLlm.pinned, main: mockLlm.main } : null,
    httpLoadgen: "http-loadgen (bench/load/http-loadgen.mjs, node:http keep-alive Agent, maxSockets = concurrency)",
    schemaSource: payloads.schemaSource,
    sizes: {
      request: payloads.request.length,
      response: payloads.response.length,
      streamFrames: payloads.frames.length,
      streamBytes: payloads.frames.reduce((a, f) => a + f.length, 0),
    },
    modelstub: modelstubBuilt ? MODELSTUB_BIN : null,
    modelstubReadyProbe: MODELSTUB_READY,
    config: cfg,
    targets: TARGETS,
    notes,
  },
  unary: null,
  stream: null,
  inprocess: null,
  startup: null,
  virtual: null,
  scale: null,
  timing: null,
  http: null,
  echo: null,
  import: null,
  peer: null,
  peers: [],
};
