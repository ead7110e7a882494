#!/usr/bin/env node
// modelstub's benchmark suite (issue 9). Every figure is measured side by side with its
// baseline in the same run, and reported as a ratio plus absolute numbers: the machine is shared
// and noisy, so only same-run ratios compare across runs.
//
//   node bench/run.mjs [--quick] [--loadgen auto|ghz|node] [--only unary,stream,...,http]
//                      [--rounds N] [--out FILE] [--strict]
//
// Servers and load generators each run in their own process; this one only orchestrates.
// Writes bench/results/latest.json and prints a markdown table. --strict exits 1 when a target
// is missed (CI runs --quick without it: it checks the bench runs end to end, not speed).
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { writePayloadFile, ensureProtoset, STREAM_CHUNKS } from "./lib/payloads.mjs";
import { BENCH_DIR, REPO_DIR, DIST_MAIN, FLOOR_SERVER, LOADGEN, MODELSTUB_BIN, PEER_DIR, PROTOSET, GENERATE_PATH, GENERATE_STREAM_PATH, HTTP_FLOOR_SERVER, HTTP_LOADGEN, CHAT_COMPLETIONS_PATH } from "./lib/paths.mjs";
import { HTTP_TEXT, httpReplyConstant, httpRequestBody, normalizeReplyId, writeHttpPayloads } from "./lib/http-payloads.mjs";
import { freePort, killAll, procMem, runNodeLoadgen, runTool, sleep, startServer } from "./lib/proc.mjs";
import { probes } from "./lib/ready.mjs";
import { writeScript } from "./lib/scripts.mjs";
import { median, ratio, round } from "./lib/stats.mjs";
import { findNpmPeer, findTool } from "./lib/tools.mjs";

const VIRTUAL_INPROCESS = path.join(BENCH_DIR, "load", "virtual-inprocess.mjs");

// How the start-up metric knows modelstub is up. Switch to "health" once modelstub serves
// grpc.health.v1 (the floor and GripMock already use "health").
const MODELSTUB_READY = "health";

const { values: argv } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    loadgen: { type: "string", default: "auto" },
    only: { type: "string" },
    rounds: { type: "string" },
    out: { type: "string" },
    strict: { type: "boolean", default: false },
    readme: { type: "boolean", default: false },
  },
});
const quick = argv.quick;

const cfg = quick
  ? {
      rounds: 1,
      unary: { concurrency: [1, 16, 64], count: 400, warmup: 100 },
      stream: { streams: 5, warmup: 1 },
      startup: { runs: 3 },
      virtual: { entries: 500, concurrency: 16 },
      scale: { calls: 500, deadlineMs: 500 },
      timing: { calls: 200, latencyMs: 100 },
      http: { concurrency: [1, 16, 64], count: 400, warmup: 100, startupRuns: 3 },
    }
  : {
      rounds: 3,
      unary: { concurrency: [1, 16, 64], durationMs: 5000, warmup: 2000 },
      stream: { streams: 300, durationMs: 10_000, warmup: 20 },
      startup: { runs: 10 },
      virtual: { entries: 10_000, concurrency: 16 },
      scale: { calls: 10_000, deadlineMs: 2000 },
      timing: { calls: 1000, latencyMs: 100 },
      http: { concurrency: [1, 16, 64], durationMs: 5000, warmup: 2000, startupRuns: 10 },
    };
if (argv.rounds) cfg.rounds = Number(argv.rounds);

const TARGETS = {
  unaryThroughput: 0.9, // >= x floor
  unaryP99: 1.2, // <= x floor
  streaming: 0.8, // >= x floor
  startupMs: 400, // < median
  virtualWallMs: 2000, // < for 10,000 entries of 1 s
  scalePeakRssMb: 300, // < for 10,000 hung calls
  timingErrorP99Ms: 5, // < at 1,000 concurrent calls
};

const sections = ["unary", "stream", "startup", "virtual", "scale", "timing", "http"];
const only = argv.only ? new Set(argv.only.split(",")) : new Set(sections);
const log = (...a) => process.stderr.write(`bench: ${a.join(" ")}\n`);

// ---------------------------------------------------------------------------------------------
// Set-up: payloads, tools, what is available.

const t0 = Date.now();
ensureProtoset();
const payloads = await writePayloadFile();
const ghz = findTool("ghz");
const gripmock = findTool("gripmock");
const mockLlm = findNpmPeer("mock-llm");
const modelstubBuilt = fs.existsSync(MODELSTUB_BIN) && (process.env.MODELSTUB_BIN ? true : fs.existsSync(DIST_MAIN));
let loadgen = argv.loadgen === "auto" ? (ghz ? "ghz" : "node") : argv.loadgen;
if (loadgen === "ghz" && !ghz) {
  log("ghz is not installed (bench/install-tools.sh): falling back to the Node load generator");
  loadgen = "node";
}
const notes = [];
if (!ghz) notes.push("ghz not installed: unary load used the Node load generator (run bench/install-tools.sh)");
if (!gripmock) notes.push("GripMock not installed: peer skipped (bench/install-tools.sh; the Go module proxy reachable here refused github.com/bavix/gripmock/v3)");
if (!mockLlm && only.has("http")) notes.push("mock-llm not installed: the http section measured modelstub against the HTTP floor only (bench/install-tools.sh installs @dwmkerr/mock-llm@0.1.29 into .cache/peers/mock-llm)");
else if (mockLlm && mockLlm.version !== mockLlm.pinned) notes.push(`mock-llm ${mockLlm.version} installed, ${mockLlm.pinned} pinned: rerun bench/install-tools.sh`);
if (!modelstubBuilt) notes.push("modelstub not built (dist/src/cli/main.js missing): modelstub measurements skipped; run `npm run build`");

const results = {
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
    gripmock: gripmock ? { version: gripmock.version, pinned: gripmock.pinned, bin: gripmock.bin } : null,
    mockLlm: mockLlm ? { package: mockLlm.package, version: mockLlm.version, pinned: mockLlm.pinned, main: mockLlm.main } : null,
    httpLoadgen: "http-loadgen (bench/load/http-loadgen.mjs, node:http keep-alive Agent, maxSockets = concurrency)",
    schemaSource: payloads.schemaSource,
    sizes: { request: payloads.request.length, response: payloads.response.length, streamFrames: payloads.frames.length, streamBytes: payloads.frames.reduce((a, f) => a + f.length, 0) },
    modelstub: modelstubBuilt ? MODELSTUB_BIN : null,
    modelstubReadyProbe: MODELSTUB_READY,
    config: cfg,
    targets: TARGETS,
    notes,
  },
  unary: null,
  stream: null,
  startup: null,
  virtual: null,
  scale: null,
  timing: null,
  http: null,
  peer: null,
  peers: [],
};

// ---------------------------------------------------------------------------------------------
// Servers.

async function startFloor(unary = "constant", port = 0) {
  return startServer({ name: `floor(${unary})`, node: true, nodeArgs: ["--expose-gc"], args: [FLOOR_SERVER, "--payloads", payloads.file, "--port", String(port), "--unary", unary] });
}

async function startModelstub(script, { clock } = {}) {
  const port = await freePort();
  // Load runs make millions of calls in one session: lift the episode cap (memory is measured).
  const args = [MODELSTUB_BIN, "serve", "--script", script, "--grpc", `127.0.0.1:${port}`, "--max-episode-calls", "100000000"];
  if (clock) args.push("--clock", clock);
  const s = await startServer({ name: "modelstub", node: true, nodeArgs: ["--expose-gc"], args, timeoutMs: 30_000 });
  s.address ??= `127.0.0.1:${port}`;
  return s;
}

async function startGripmock({ waitReady = true } = {}) {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const s = await startServer({
    name: "gripmock",
    cmd: gripmock.bin,
    args: ["--stub", path.join(PEER_DIR, "stubs"), path.join(PEER_DIR, "model.proto")],
    env: { GRPC_HOST: "127.0.0.1", GRPC_PORT: String(grpcPort), HTTP_HOST: "127.0.0.1", HTTP_PORT: String(httpPort), LOG_LEVEL: "error", STUB_WATCHER_ENABLED: "false" },
    readyLine: null,
  });
  s.address = `127.0.0.1:${grpcPort}`;
  if (waitReady) await probes.health(s, s.address, 30_000);
  return s;
}

// HTTP targets: the floor (bare node:http), modelstub's HTTP front, mock-llm. Each resolves once
// listening (waitReady) or right after spawn (for the start-up metric, which probes itself).

async function startHttpFloor(replyFile, { waitReady = true } = {}) {
  const port = await freePort();
  const s = await startServer({ name: "http-floor", node: true, nodeArgs: ["--expose-gc"], args: [HTTP_FLOOR_SERVER, "--reply", replyFile, "--port", String(port)], readyLine: waitReady ? /listening on (\S+)/ : null });
  s.address = `127.0.0.1:${port}`;
  return s;
}

async function startModelstubHttp(script, { waitReady = true } = {}) {
  const port = await freePort();
  // gRPC on a port of its own choosing (it is always served); HTTP is what is measured. The
  // episode cap is lifted as in startModelstub.
  const args = [MODELSTUB_BIN, "serve", "--script", script, "--grpc", "127.0.0.1:0", "--http", `127.0.0.1:${port}`, "--max-episode-calls", "100000000"];
  const s = await startServer({ name: "modelstub(http)", node: true, nodeArgs: ["--expose-gc"], args, readyLine: waitReady ? /HTTP listening on http:\/\/(\S+)/ : null, timeoutMs: 30_000 });
  s.address = `127.0.0.1:${port}`;
  return s;
}

/** mock-llm with its default configuration: cwd is an empty directory, so no mock-llm.yaml. */
async function startMockLlm(cwd, { waitReady = true } = {}) {
  const port = await freePort();
  const s = await startServer({
    name: "mock-llm",
    node: true,
    nodeArgs: ["--expose-gc"],
    args: [mockLlm.main],
    cwd,
    env: { HOST: "127.0.0.1", PORT: String(port) },
    readyLine: waitReady ? /server running on (\S+)/ : null,
    timeoutMs: 30_000,
  });
  s.address = `127.0.0.1:${port}`;
  return s;
}

/** One POST on a fresh connection: { status, body }. */
function httpPost(address, urlPath, body, timeoutMs = 10_000) {
  const [host, port] = [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path: urlPath, method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" } }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString() }));
      res.on("error", reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`POST ${urlPath} on ${address} timed out`)));
    req.on("error", reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------
// Load.

/** One unary load run with the chosen generator: { rps, p50, p99, mean, calls, codes }. */
async function unaryLoad(address, concurrency, { count, durationMs, warmup }) {
  if (loadgen === "ghz") {
    const base = ["--insecure", "--protoset", PROTOSET, "--call", "modelstub.v1.ModelService.Generate", "--binary-file", payloads.requestBin, "-c", String(concurrency), "--connections", "1", "-t", "10s", "-O", "json"];
    if (warmup) await runTool(ghz.bin, [...base, "-n", String(Math.max(warmup, concurrency)), address], { timeoutMs: 60_000 });
    const args = durationMs ? [...base, "-z", `${durationMs / 1000}s`, address] : [...base, "-n", String(Math.max(count, concurrency)), address];
    const r = await runTool(ghz.bin, args, { timeoutMs: (durationMs ?? 60_000) + 60_000 });
    let j;
    try {
      j = JSON.parse(r.stdout);
    } catch {
      throw new Error(`ghz failed (${r.code}): ${r.stderr.slice(-400)}`);
    }
    const pct = (p) => j.latencyDistribution?.find((d) => d.percentage === p)?.latency / 1e6;
    return { tool: "ghz", rps: j.rps, calls: j.count, codes: j.statusCodeDistribution, mean: j.average / 1e6, p50: pct(50), p99: pct(99) };
  }
  const j = await runNodeLoadgen(
    LOADGEN,
    { target: address, path: GENERATE_PATH, payloads: payloads.file, concurrency, count: durationMs ? 5_000_000 : count, "duration-ms": durationMs ?? 60_000, warmup: warmup ?? 0, "deadline-ms": 10_000 },
    (durationMs ?? 60_000) + 90_000,
  );
  return { tool: "node", rps: j.rps, calls: j.calls, codes: j.codes, mean: j.latencyMs.mean, p50: j.latencyMs.p50, p99: j.latencyMs.p99 };
}

function nodeLoad(address, opts, timeoutMs = 180_000) {
  return runNodeLoadgen(LOADGEN, { target: address, payloads: payloads.file, path: GENERATE_PATH, ...opts }, timeoutMs);
}

const okOnly = (codes, n) => (codes?.OK ?? 0) === n;

// ---------------------------------------------------------------------------------------------
// Measurements. Each returns a plain object for the JSON, and takes the servers it needs.

/** Unary throughput and latency at each concurrency: floor, modelstub and GripMock interleaved. */
async function measureUnary() {
  const targets = [];
  targets.push({ name: "floor", server: await startFloor() });
  if (modelstubBuilt) targets.push({ name: "modelstub", server: await startModelstub(writeScript("unary")) });
  if (gripmock) {
    try {
      targets.push({ name: "gripmock", server: await startGripmock() });
    } catch (e) {
      notes.push(`GripMock did not start: ${e.message}`);
    }
  }
  const runs = {};
  try {
    for (let r = 0; r < cfg.rounds; r++) {
      for (const c of cfg.unary.concurrency) {
        // Alternate the order each round, so drift in machine load hits every target alike.
        const order = r % 2 ? [...targets].reverse() : targets;
        for (const t of order) {
          log(`unary round ${r + 1}/${cfg.rounds} c=${c} ${t.name}`);
          const res = await unaryLoad(t.server.address, c, cfg.unary);
          if (!res.codes?.OK) throw new Error(`${t.name}: no OK calls: ${JSON.stringify(res.codes)}`);
          ((runs[t.name] ??= {})[c] ??= []).push(res);
        }
      }
    }
  } finally {
    for (const t of targets) await t.server.stop();
  }
  const out = { loadgen: loadgen, byConcurrency: {} };
  for (const c of cfg.unary.concurrency) {
    const row = {};
    for (const [name, byC] of Object.entries(runs)) {
      const rs = byC[c];
      row[name] = { rps: median(rs.map((x) => x.rps)), p50Ms: median(rs.map((x) => x.p50)), p99Ms: median(rs.map((x) => x.p99)), meanMs: median(rs.map((x) => x.mean)), calls: rs.reduce((a, x) => a + x.calls, 0), nonOk: rs.reduce((a, x) => a + (x.calls - (x.codes?.OK ?? 0)), 0), rounds: rs.map((x) => round(x.rps, 0)) };
    }
    for (const name of ["modelstub", "gripmock"]) {
      if (!row[name]) continue;
      row[name].throughputRatio = ratio(row[name].rps, row.floor.rps);
      row[name].p50Ratio = ratio(row[name].p50Ms, row.floor.p50Ms);
      row[name].p99Ratio = ratio(row[name].p99Ms, row.floor.p99Ms);
    }
    out.byConcurrency[c] = row;
  }
  return out;
}

/** GenerateStream chunks per second for a 1,000-chunk reply, floor and modelstub interleaved. */
async function measureStream() {
  const targets = [{ name: "floor", server: await startFloor() }];
  if (modelstubBuilt) targets.push({ name: "modelstub", server: await startModelstub(writeScript("stream")) });
  const runs = {};
  const expectFrames = STREAM_CHUNKS + 1;
  try {
    for (let r = 0; r < cfg.rounds; r++) {
      const order = r % 2 ? [...targets].reverse() : targets;
      for (const t of order) {
        log(`stream round ${r + 1}/${cfg.rounds} ${t.name}`);
        const j = await nodeLoad(t.server.address, { path: GENERATE_STREAM_PATH, payload: "streamRequest", mode: "stream", concurrency: 1, count: cfg.stream.streams, "duration-ms": cfg.stream.durationMs ?? 60_000, warmup: cfg.stream.warmup, "deadline-ms": 30_000 });
        if (!okOnly(j.codes, j.calls) || j.frames !== j.calls * expectFrames) throw new Error(`${t.name}: streams not whole: ${JSON.stringify(j.codes)} frames ${j.frames}/${j.calls * expectFrames}`);
        (runs[t.name] ??= []).push(j);
      }
    }
  } finally {
    for (const t of targets) await t.server.stop();
  }
  const out = { chunksPerStream: STREAM_CHUNKS, framesPerStream: expectFrames };
  for (const [name, rs] of Object.entries(runs)) {
    out[name] = { framesPerSec: median(rs.map((x) => x.framesPerSec)), streamsPerSec: median(rs.map((x) => x.rps)), streamP50Ms: median(rs.map((x) => x.latencyMs.p50)), streams: rs.reduce((a, x) => a + x.calls, 0), rounds: rs.map((x) => round(x.framesPerSec, 0)) };
  }
  if (out.modelstub) out.modelstub.ratio = ratio(out.modelstub.framesPerSec, out.floor.framesPerSec);
  return out;
}

/** Spawn to ready, `runs` times each, interleaved: floor (health), modelstub, GripMock (health). */
async function measureStartup() {
  const kinds = [
    {
      name: "floor",
      probe: "health",
      spawn: async () => {
        const port = await freePort();
        const s = await startServer({ name: "floor", node: true, args: [FLOOR_SERVER, "--payloads", payloads.file, "--port", String(port)], readyLine: null });
        s.address = `127.0.0.1:${port}`;
        return s;
      },
    },
  ];
  if (modelstubBuilt) {
    const script = writeScript("unary");
    kinds.push({
      name: "modelstub",
      probe: MODELSTUB_READY,
      spawn: async () => {
        const port = await freePort();
        const s = await startServer({ name: "modelstub", node: true, args: [MODELSTUB_BIN, "serve", "--script", script, "--grpc", `127.0.0.1:${port}`], readyLine: null });
        s.address = `127.0.0.1:${port}`;
        return s;
      },
    });
  }
  if (gripmock) kinds.push({ name: "gripmock", probe: "health", spawn: () => startGripmock({ waitReady: false }) });
  const times = {};
  for (let i = 0; i < cfg.startup.runs; i++) {
    for (const k of kinds) {
      const s = await k.spawn();
      try {
        await probes[k.probe](s, s.address, 30_000);
        const ms = Number(process.hrtime.bigint() - s.spawnedAt) / 1e6;
        (times[k.name] ??= []).push(ms);
      } catch (e) {
        notes.push(`start-up of ${k.name} failed: ${e.message}`);
      } finally {
        await s.stop();
      }
    }
  }
  const out = {};
  for (const k of kinds) {
    const t = times[k.name] ?? [];
    out[k.name] = { probe: k.probe, medianMs: median(t), minMs: Math.min(...t), maxMs: Math.max(...t), runs: t.map((x) => round(x, 1)) };
  }
  for (const n of ["modelstub", "gripmock"]) if (out[n]) out[n].ratio = ratio(out[n].medianMs, out.floor.medianMs);
  return out;
}

/** Virtual time: N entries declaring 1 s each, served under --clock virtual; wall time of the calls. */
async function measureVirtual() {
  const { entries, concurrency } = cfg.virtual;
  const floor = await startFloor();
  let floorRun;
  try {
    floorRun = await nodeLoad(floor.address, { concurrency, count: entries, "duration-ms": 120_000 });
  } finally {
    await floor.stop();
  }
  const out = { entries, declaredPerEntryMs: 1000, declaredTotalMs: entries * 1000, concurrency, floor: { wallMs: floorRun.elapsedMs } };
  if (!modelstubBuilt) return out;
  const spawnAt = process.hrtime.bigint();
  const ms = await startModelstub(writeScript("virtual", entries), { clock: "virtual" });
  const startMs = Number(ms.readyAt - spawnAt) / 1e6;
  try {
    const j = await nodeLoad(ms.address, { concurrency, count: entries, "duration-ms": 120_000 });
    if (!okOnly(j.codes, entries)) throw new Error(`virtual: not every call answered OK: ${JSON.stringify(j.codes)}`);
    out.modelstub = { wallMs: j.elapsedMs, startToListeningMs: startMs, ratio: ratio(j.elapsedMs, floorRun.elapsedMs), p99Ms: j.latencyMs.p99 };
  } finally {
    await ms.stop();
  }
  // The same script through the in-process port (no network), sequentially: the clock's own cost.
  const r = await runTool(VIRTUAL_INPROCESS, ["--script", writeScript("virtual", entries), "--count", String(entries)], { node: true, timeoutMs: 120_000 });
  try {
    const j = JSON.parse(r.stdout.trim().split("\n").pop());
    if (j.ok !== entries) throw new Error(`not every call answered: ${JSON.stringify(j.errors)}`);
    out.inProcess = { wallMs: j.wallMs, loadMs: j.loadMs, virtualMs: j.virtualMs };
  } catch (e) {
    notes.push(`virtual time in process failed: ${e.message}; ${r.stderr.slice(-300)}`);
  }
  return out;
}

/** N concurrent calls hanging until a deadline: peak RSS, then RSS and active handles once cut off. */
async function scaleOne(server) {
  await sleep(200);
  const before = await server.stats(true);
  const memBefore = procMem(server.pid);
  let peak = memBefore.rss;
  let peakFds = memBefore.fds;
  let peakHandles = before.handles;
  let peakHeap = before.heapUsed;
  const sampler = setInterval(() => {
    const m = procMem(server.pid);
    if (m) {
      peak = Math.max(peak, m.rss);
      peakFds = Math.max(peakFds, m.fds);
    }
  }, 25);
  const statsSampler = setInterval(() => {
    server.stats(false).then(
      (s) => ((peakHandles = Math.max(peakHandles, s.handles)), (peakHeap = Math.max(peakHeap, s.heapUsed))),
      () => {},
    );
  }, 250);
  let j;
  try {
    j = await nodeLoad(server.address, { concurrency: cfg.scale.calls, count: cfg.scale.calls, "deadline-ms": cfg.scale.deadlineMs, "duration-ms": 60_000 });
  } finally {
    clearInterval(sampler);
    clearInterval(statsSampler);
  }
  const mid = procMem(server.pid);
  await sleep(1000);
  const after = await server.stats(true);
  const memAfter = procMem(server.pid);
  const mb = (b) => b / 2 ** 20;
  return {
    codes: j.codes,
    // Client side: calls open at once, and when the last was opened (all hung together only
    // when that is before the deadline).
    maxInFlight: j.maxInFlight,
    lastIssueMs: j.lastIssueMs,
    cutOffMs: { p50: j.latencyMs.p50, p99: j.latencyMs.p99, max: j.latencyMs.max },
    rssBeforeMb: mb(memBefore.rss),
    peakRssMb: mb(Math.max(peak, mid.peakRss)), // VmHWM: the kernel's own peak
    peakGrowthMb: mb(Math.max(peak, mid.peakRss) - memBefore.rss),
    peakHeapMb: mb(peakHeap),
    peakHandles,
    rssAfterMb: mb(memAfter.rss),
    heapAfterMb: mb(after.heapUsed),
    handlesBefore: before.handles,
    handlesAfter: after.handles,
    resourcesBefore: before.resources,
    resourcesAfter: after.resources,
    handlesBackToBaseline: after.handles <= before.handles,
    fdsBefore: memBefore.fds,
    fdsPeak: peakFds,
    fdsAfter: memAfter.fds,
  };
}

async function measureScale() {
  const out = { calls: cfg.scale.calls, deadlineMs: cfg.scale.deadlineMs };
  const floor = await startFloor("hang");
  try {
    log(`scale: floor, ${cfg.scale.calls} hung calls`);
    out.floor = await scaleOne(floor);
  } finally {
    await floor.stop();
  }
  if (modelstubBuilt) {
    const ms = await startModelstub(writeScript("hang"));
    try {
      log(`scale: modelstub, ${cfg.scale.calls} hung calls`);
      out.modelstub = await scaleOne(ms);
      out.modelstub.peakRssRatio = ratio(out.modelstub.peakRssMb, out.floor.peakRssMb);
    } finally {
      await ms.stop();
    }
  }
  return out;
}

/** N concurrent calls with a declared latency on the real clock: observed minus declared. */
async function timingOne(address) {
  const { calls, latencyMs } = cfg.timing;
  // One warm-up wave in the same process (JIT, connection), then the measured wave.
  const j = await runNodeLoadgen(LOADGEN, { target: address, payloads: payloads.file, path: GENERATE_PATH, concurrency: calls, count: calls, warmup: calls, "deadline-ms": 10_000, "duration-ms": 60_000 }, 90_000);
  if (!okOnly(j.codes, calls)) throw new Error(`timing: not every call answered OK: ${JSON.stringify(j.codes)}`);
  const L = j.latencyMs;
  return { observedMs: { p50: L.p50, p99: L.p99, max: L.max, min: L.min }, errorMs: { p50: L.p50 - latencyMs, p99: L.p99 - latencyMs, max: L.max - latencyMs } };
}

async function measureTiming() {
  const { calls, latencyMs } = cfg.timing;
  const out = { calls, declaredMs: latencyMs, rounds: cfg.rounds };
  const targets = [{ name: "floor", server: await startFloor(`delay=${latencyMs}`) }];
  if (modelstubBuilt) targets.push({ name: "modelstub", server: await startModelstub(writeScript("latency", latencyMs)) });
  const runs = {};
  try {
    for (let r = 0; r < cfg.rounds; r++) {
      for (const t of r % 2 ? [...targets].reverse() : targets) {
        log(`timing round ${r + 1}/${cfg.rounds} ${t.name}`);
        (runs[t.name] ??= []).push(await timingOne(t.server.address));
      }
    }
  } finally {
    for (const t of targets) await t.server.stop();
  }
  for (const [name, rs] of Object.entries(runs)) {
    const m = (f) => median(rs.map(f));
    out[name] = {
      observedMs: { p50: m((x) => x.observedMs.p50), p99: m((x) => x.observedMs.p99), max: m((x) => x.observedMs.max) },
      errorMs: { p50: m((x) => x.errorMs.p50), p99: m((x) => x.errorMs.p99), max: m((x) => x.errorMs.max) },
      roundsP99: rs.map((x) => round(x.errorMs.p99, 2)),
    };
  }
  // The floor answers after the same delay with a bare timer: its error is the client's, the
  // transport's and the machine's. What modelstub adds over it is its own timing error.
  if (out.modelstub) out.modelstub.excessErrorMs = { p50: out.modelstub.errorMs.p50 - out.floor.errorMs.p50, p99: out.modelstub.errorMs.p99 - out.floor.errorMs.p99 };
  return out;
}

/** One HTTP load run with the Node HTTP load generator: { rps, p50, p99, mean, calls, ok, ... }. */
async function httpLoad(address, requestFile, concurrency, { count, durationMs, warmup }) {
  const j = await runNodeLoadgen(
    HTTP_LOADGEN,
    { target: address, path: CHAT_COMPLETIONS_PATH, "body-file": requestFile, concurrency, count: durationMs ? 5_000_000 : count, "duration-ms": durationMs ?? 60_000, warmup: warmup ?? 0, "timeout-ms": 10_000, expect: `"content":${JSON.stringify(HTTP_TEXT)}` },
    (durationMs ?? 60_000) + 90_000,
  );
  return { rps: j.rps, calls: j.calls, ok: j.ok, mismatched: j.mismatched, codes: j.codes, mean: j.latencyMs.mean, p50: j.latencyMs.p50, p99: j.latencyMs.p99, bytes: j.meanResponseBytes, sockets: j.socketsOpened };
}

/**
 * The OpenAI-compatible HTTP front: POST /v1/chat/completions req/s and latency at each
 * concurrency, the HTTP floor, modelstub and mock-llm interleaved as in the unary section; then
 * spawn to first 200 for each, interleaved.
 */
async function measureHttp() {
  const out = { loadgen: results.meta.httpLoadgen, request: { path: CHAT_COMPLETIONS_PATH, bytes: Buffer.byteLength(httpRequestBody()), text: HTTP_TEXT }, byConcurrency: {}, startup: null };
  // mock-llm's cwd: an empty directory, so it runs its default configuration. Removed at the
  // end, or at exit if the run is cut short.
  const mockDir = mockLlm ? fs.mkdtempSync(path.join(os.tmpdir(), "modelstub-bench-mock-llm-")) : null;
  const removeMockDir = () => mockDir && fs.rmSync(mockDir, { recursive: true, force: true });
  process.once("exit", removeMockDir);
  try {
    const files = await httpLoadRuns(out, mockDir);
    out.startup = await measureHttpStartup(files.replyFile, mockDir);
  } finally {
    removeMockDir();
    process.off("exit", removeMockDir);
  }
  return out;
}

/** The load part of measureHttp: fills out.byConcurrency; returns the payload files. */
async function httpLoadRuns(out, mockDir) {
  const hc = cfg.http;
  const targets = [];
  const started = [];
  const runs = {};
  let files;
  try {
    // The floor answers modelstub's own reply to the bench request (asked once), with the id's
    // call sequence set to 1000 as in the gRPC floor; the built constant when modelstub is absent.
    let reply = httpReplyConstant();
    out.floorReply = "built constant (lib/http-payloads.mjs; modelstub not built)";
    let ms = null;
    if (modelstubBuilt) {
      ms = await startModelstubHttp(writeScript("http"));
      started.push(ms);
      const r = await httpPost(ms.address, CHAT_COMPLETIONS_PATH, httpRequestBody());
      if (r.status !== 200 || !r.body.includes(JSON.stringify(HTTP_TEXT))) {
        throw new Error(`modelstub's HTTP reply to the bench request is not the scripted one: ${r.status} ${r.body.slice(0, 300)}`);
      }
      reply = normalizeReplyId(r.body);
      out.floorReply = "modelstub's reply to the bench request, id sequence set to 1000";
      if (reply !== httpReplyConstant()) out.floorReplyDiffersFromBuiltConstant = true;
    }
    files = writeHttpPayloads(reply);
    out.floorReplyBytes = Buffer.byteLength(reply);
    const floor = await startHttpFloor(files.replyFile);
    started.push(floor);
    targets.push({ name: "floor", server: floor });
    if (ms) targets.push({ name: "modelstub", server: ms });
    if (mockLlm) {
      try {
        const peer = await startMockLlm(mockDir);
        started.push(peer);
        targets.push({ name: "mock-llm", server: peer });
      } catch (e) {
        notes.push(`mock-llm did not start: ${e.message}`);
      }
    }
    for (let r = 0; r < cfg.rounds; r++) {
      for (const c of hc.concurrency) {
        // Alternate the order each round, so drift in machine load hits every target alike.
        const order = r % 2 ? [...targets].reverse() : targets;
        for (const t of order) {
          log(`http round ${r + 1}/${cfg.rounds} c=${c} ${t.name}`);
          const res = await httpLoad(t.server.address, files.requestFile, c, hc);
          if (!res.ok) throw new Error(`${t.name}: no 2xx answers: ${JSON.stringify(res.codes)}`);
          ((runs[t.name] ??= {})[c] ??= []).push(res);
        }
      }
    }
  } finally {
    for (const s of started) await s.stop();
  }
  for (const c of hc.concurrency) {
    const row = {};
    for (const [name, byC] of Object.entries(runs)) {
      const rs = byC[c];
      row[name] = {
        rps: median(rs.map((x) => x.rps)),
        p50Ms: median(rs.map((x) => x.p50)),
        p99Ms: median(rs.map((x) => x.p99)),
        meanMs: median(rs.map((x) => x.mean)),
        calls: rs.reduce((a, x) => a + x.calls, 0),
        non2xx: rs.reduce((a, x) => a + (x.calls - x.ok), 0),
        mismatched: rs.reduce((a, x) => a + x.mismatched, 0),
        codes: rs.reduce((a, x) => (Object.entries(x.codes).forEach(([k, v]) => (a[k] = (a[k] ?? 0) + v)), a), {}),
        responseBytes: median(rs.map((x) => x.bytes)),
        socketsOpened: rs.map((x) => x.sockets.warmup + x.sockets.measured),
        rounds: rs.map((x) => round(x.rps, 0)),
      };
    }
    for (const name of ["modelstub", "mock-llm"]) {
      if (!row[name]) continue;
      row[name].throughputRatio = ratio(row[name].rps, row.floor.rps);
      row[name].p50Ratio = ratio(row[name].p50Ms, row.floor.p50Ms);
      row[name].p99Ratio = ratio(row[name].p99Ms, row.floor.p99Ms);
    }
    if (row.modelstub && row["mock-llm"]) row["mock-llm"].modelstubThroughputRatio = ratio(row.modelstub.rps, row["mock-llm"].rps);
    for (const [name, x] of Object.entries(row)) {
      if (x.non2xx) notes.push(`http c=${c} ${name}: ${x.non2xx} answers not 2xx: ${JSON.stringify(x.codes)}`);
      if (x.mismatched) notes.push(`http c=${c} ${name}: ${x.mismatched} 2xx answers without the expected content`);
    }
    out.byConcurrency[c] = row;
  }
  return files;
}

/** Spawn to first 200: floor GET /health, modelstub GET /v1/models, mock-llm GET /health. */
async function measureHttpStartup(replyFile, mockDir) {
  const kinds = [{ name: "floor", probe: "httpHealth", spawn: () => startHttpFloor(replyFile, { waitReady: false }) }];
  if (modelstubBuilt) {
    const script = writeScript("http");
    kinds.push({ name: "modelstub", probe: "httpModels", spawn: () => startModelstubHttp(script, { waitReady: false }) });
  }
  if (mockLlm) kinds.push({ name: "mock-llm", probe: "httpHealth", spawn: () => startMockLlm(mockDir, { waitReady: false }) });
  const times = {};
  for (let i = 0; i < cfg.http.startupRuns; i++) {
    for (const k of i % 2 ? [...kinds].reverse() : kinds) {
      const s = await k.spawn();
      try {
        await probes[k.probe](s, s.address, 30_000);
        (times[k.name] ??= []).push(Number(process.hrtime.bigint() - s.spawnedAt) / 1e6);
      } catch (e) {
        notes.push(`http start-up of ${k.name} failed: ${e.message}`);
      } finally {
        await s.stop();
      }
    }
  }
  const out = {};
  for (const k of kinds) {
    const t = times[k.name] ?? [];
    out[k.name] = { probe: k.probe, medianMs: median(t), minMs: t.length ? Math.min(...t) : null, maxMs: t.length ? Math.max(...t) : null, runs: t.map((x) => round(x, 1)) };
  }
  for (const n of ["modelstub", "mock-llm"]) if (out[n]) out[n].ratio = ratio(out[n].medianMs, out.floor.medianMs);
  if (out.modelstub && out["mock-llm"]) out["mock-llm"].modelstubRatio = ratio(out.modelstub.medianMs, out["mock-llm"].medianMs);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Run.

const measures = { unary: measureUnary, stream: measureStream, startup: measureStartup, virtual: measureVirtual, scale: measureScale, timing: measureTiming, http: measureHttp };
const failures = [];
for (const name of sections) {
  if (!only.has(name)) continue;
  const started = Date.now();
  try {
    results[name] = await measures[name]();
    results[name].secs = round((Date.now() - started) / 1000, 1);
  } catch (e) {
    failures.push(`${name}: ${e.message}`);
    results[name] = { error: e.message };
    log(`${name} FAILED: ${e.stack ?? e.message}`);
  }
}
// Peers: GripMock (gRPC; when go install can fetch it) and mock-llm (OpenAI-compatible HTTP, the
// one installable here). results.peer is mock-llm when it ran, else GripMock; results.peers both.
if (gripmock && (results.unary?.byConcurrency || results.startup?.gripmock)) {
  results.peers.push({
    name: "GripMock",
    version: gripmock.version,
    transport: "grpc",
    unary: Object.fromEntries(Object.entries(results.unary?.byConcurrency ?? {}).map(([c, row]) => [c, row.gripmock])),
    startup: results.startup?.gripmock ?? null,
  });
}
const httpRows = Object.entries(results.http?.byConcurrency ?? {}).filter(([, row]) => row["mock-llm"]);
if (mockLlm && (httpRows.length || results.http?.startup?.["mock-llm"])) {
  results.peers.push({
    name: "mock-llm",
    package: mockLlm.package,
    version: mockLlm.version,
    transport: "http",
    config: "default (no mock-llm.yaml): POST /v1/chat/completions echoes the last user message",
    standsInFor: "GripMock v3 (the Go module proxy reachable here refuses github.com/bavix/gripmock/v3)",
    http: Object.fromEntries(httpRows.map(([c, row]) => [c, row["mock-llm"]])),
    startup: results.http?.startup?.["mock-llm"] ?? null,
  });
}
results.peer = results.peers.find((p) => p.name === "mock-llm") ?? results.peers[0] ?? null;
results.meta.totalSecs = round((Date.now() - t0) / 1000, 1);
results.meta.failures = failures;

// ---------------------------------------------------------------------------------------------
// Verdicts and output.

const verdicts = [];
const verdict = (name, value, pass) => verdicts.push({ name, value, pass });
const f = (x, d = 2) => (x == null ? "-" : typeof x === "number" ? String(round(x, d)) : String(x));
const rows = [];
const row = (metric, modelstub, floor, ratioText, target, pass) => rows.push([metric, modelstub, floor, ratioText, target, pass === undefined ? "-" : pass ? "pass" : "MISS"]);
const pending = "pending";

if (results.unary?.byConcurrency) {
  for (const [c, r] of Object.entries(results.unary.byConcurrency)) {
    const m = r.modelstub;
    const tp = m ? m.throughputRatio >= TARGETS.unaryThroughput : undefined;
    const p99 = m ? m.p99Ratio <= TARGETS.unaryP99 : undefined;
    if (m) verdict(`unary c=${c} throughput`, m.throughputRatio, tp), verdict(`unary c=${c} p99`, m.p99Ratio, p99);
    row(`Unary c=${c} req/s`, m ? f(m.rps, 0) : pending, f(r.floor.rps, 0), m ? f(m.throughputRatio) + "x" : "-", `>= ${TARGETS.unaryThroughput}x`, tp);
    row(`Unary c=${c} p50 ms`, m ? f(m.p50Ms, 3) : pending, f(r.floor.p50Ms, 3), m ? f(m.p50Ratio) + "x" : "-", "", undefined);
    row(`Unary c=${c} p99 ms`, m ? f(m.p99Ms, 3) : pending, f(r.floor.p99Ms, 3), m ? f(m.p99Ratio) + "x" : "-", `<= ${TARGETS.unaryP99}x`, p99);
  }
}
if (results.stream?.floor) {
  const m = results.stream.modelstub;
  const pass = m ? m.ratio >= TARGETS.streaming : undefined;
  if (m) verdict("streaming", m.ratio, pass);
  row(`Stream chunks/s (${STREAM_CHUNKS}-chunk reply)`, m ? f(m.framesPerSec, 0) : pending, f(results.stream.floor.framesPerSec, 0), m ? f(m.ratio) + "x" : "-", `>= ${TARGETS.streaming}x`, pass);
}
if (results.startup?.floor) {
  const m = results.startup.modelstub;
  const pass = m ? m.medianMs < TARGETS.startupMs : undefined;
  if (m) verdict("start-up", m.medianMs, pass);
  row(`Start-up median ms (n=${cfg.startup.runs})`, m ? f(m.medianMs, 1) : pending, f(results.startup.floor.medianMs, 1), m ? f(m.ratio) + "x" : "-", `< ${TARGETS.startupMs} ms`, pass);
}
if (results.virtual?.floor) {
  const v = results.virtual;
  const m = v.modelstub;
  const limit = (TARGETS.virtualWallMs * v.entries) / 10_000;
  const pass = m ? m.wallMs < limit : undefined;
  if (m) verdict("virtual time", m.wallMs, pass);
  row(`Virtual: ${v.entries} x 1 s entries over gRPC (c=${v.concurrency}), wall ms`, m ? f(m.wallMs, 0) : pending, f(v.floor.wallMs, 0) + " (same calls)", m ? f(m.ratio) + "x" : "-", `< ${limit} ms`, pass);
  if (v.inProcess) {
    const ip = v.inProcess.wallMs < limit;
    verdict("virtual time in process", v.inProcess.wallMs, ip);
    row(`Virtual: same, in-process port, sequential, wall ms (script load ${f(v.inProcess.loadMs, 0)} ms)`, f(v.inProcess.wallMs, 0), "-", "-", `< ${limit} ms`, ip);
  }
}
if (results.scale?.floor) {
  const s = results.scale;
  const m = s.modelstub;
  const limit = TARGETS.scalePeakRssMb;
  const pass = m ? m.peakRssMb < limit && m.handlesBackToBaseline : undefined;
  if (m) verdict("scale", m.peakRssMb, pass);
  row(`Scale: ${s.calls} hung calls (client had ${m?.maxInFlight ?? s.floor.maxInFlight} open at once), peak RSS MB`, m ? f(m.peakRssMb, 1) : pending, f(s.floor.peakRssMb, 1), m ? f(m.peakRssRatio) + "x" : "-", `< ${limit} MB`, m ? m.peakRssMb < limit : undefined);
  row(`Scale: RSS MB after cut-off`, m ? f(m.rssAfterMb, 1) : pending, f(s.floor.rssAfterMb, 1), "-", "", undefined);
  row(`Scale: handles before -> after`, m ? `${m.handlesBefore} -> ${m.handlesAfter}` : pending, `${s.floor.handlesBefore} -> ${s.floor.handlesAfter}`, "-", "back to baseline", m ? m.handlesBackToBaseline : undefined);
}
if (results.timing?.floor) {
  const t = results.timing;
  const m = t.modelstub;
  // The verdict is on the error modelstub adds over the floor's bare timer: a burst of 1,000
  // calls costs the client and transport more than 5 ms on any machine, and the floor pays it too.
  const pass = m ? m.excessErrorMs.p99 < TARGETS.timingErrorP99Ms : undefined;
  if (m) verdict("timing accuracy (p99 error over floor)", m.excessErrorMs.p99, pass);
  row(`Timing: ${t.calls} x ${t.declaredMs} ms, error p50 ms`, m ? f(m.errorMs.p50, 2) : pending, f(t.floor.errorMs.p50, 2), m ? `+${f(m.excessErrorMs.p50, 2)} ms` : "-", "", undefined);
  row(`Timing: ${t.calls} x ${t.declaredMs} ms, error p99 ms`, m ? f(m.errorMs.p99, 2) : pending, f(t.floor.errorMs.p99, 2), m ? `+${f(m.excessErrorMs.p99, 2)} ms` : "-", `< ${TARGETS.timingErrorP99Ms} ms over floor`, pass);
}
// HTTP: no targets in the issue, so no verdicts; ratios against the HTTP floor.
if (results.http?.byConcurrency) {
  for (const [c, r] of Object.entries(results.http.byConcurrency)) {
    const m = r.modelstub;
    row(`HTTP c=${c} req/s`, m ? f(m.rps, 0) : pending, f(r.floor.rps, 0), m ? f(m.throughputRatio) + "x" : "-", "", undefined);
    row(`HTTP c=${c} p50 ms`, m ? f(m.p50Ms, 3) : pending, f(r.floor.p50Ms, 3), m ? f(m.p50Ratio) + "x" : "-", "", undefined);
    row(`HTTP c=${c} p99 ms`, m ? f(m.p99Ms, 3) : pending, f(r.floor.p99Ms, 3), m ? f(m.p99Ratio) + "x" : "-", "", undefined);
  }
}
if (results.http?.startup?.floor) {
  const m = results.http.startup.modelstub;
  row(`HTTP start-up median ms (n=${cfg.http.startupRuns}, spawn to first 200)`, m ? f(m.medianMs, 1) : pending, f(results.http.startup.floor.medianMs, 1), m ? f(m.ratio) + "x" : "-", "", undefined);
}
for (const peer of results.peers) {
  if (peer.name === "GripMock") {
    for (const [c, g] of Object.entries(peer.unary)) {
      if (!g) continue;
      const ms = results.unary.byConcurrency[c].modelstub;
      row(`Peer GripMock ${peer.version} c=${c} req/s`, ms ? f(ms.rps, 0) : pending, f(g.rps, 0) + " (GripMock)", ms ? f(ratio(ms.rps, g.rps)) + "x" : "-", "", undefined);
    }
    if (peer.startup) {
      const ms = results.startup?.modelstub;
      row(`Peer GripMock start-up median ms`, ms ? f(ms.medianMs, 1) : pending, f(peer.startup.medianMs, 1) + " (GripMock)", ms ? f(ratio(ms.medianMs, peer.startup.medianMs)) + "x" : "-", "", undefined);
    }
  } else if (peer.name === "mock-llm") {
    for (const [c, p] of Object.entries(peer.http)) {
      const ms = results.http.byConcurrency[c].modelstub;
      row(`Peer mock-llm ${peer.version} c=${c} req/s (HTTP)`, ms ? f(ms.rps, 0) : pending, f(p.rps, 0) + " (mock-llm)", ms ? f(ratio(ms.rps, p.rps)) + "x" : "-", "", undefined);
    }
    if (peer.startup) {
      const ms = results.http?.startup?.modelstub;
      row(`Peer mock-llm ${peer.version} start-up median ms (HTTP)`, ms ? f(ms.medianMs, 1) : pending, f(peer.startup.medianMs, 1) + " (mock-llm)", ms ? f(ratio(ms.medianMs, peer.startup.medianMs)) + "x" : "-", "", undefined);
    }
  }
}
results.verdicts = verdicts;

const header = ["Measurement", "modelstub", "baseline (floor)", "ratio", "target", "verdict"];
const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
const lines = [
  `## modelstub bench (${results.meta.mode}, ${results.meta.date})`,
  "",
  `Node ${process.version}, ${results.meta.cpus} CPUs, load average at start ${results.meta.loadavgAtStart.join(" ")}; unary load: ${results.meta.loadgen}; streams: Node load generator${results.http ? "; HTTP: Node http load generator (keep-alive)" : ""}; ${cfg.rounds} round(s), medians.`,
  "",
  table,
  "",
  ...notes.map((n) => `- note: ${n}`),
  ...failures.map((x) => `- FAILED: ${x}`),
  `- total ${results.meta.totalSecs} s`,
];
process.stdout.write(lines.join("\n") + "\n");

// --readme: the table (with the machine, the command and the date) replaces what stands between
// the bench markers of docs/performance.md, so the page always shows one whole run, never a
// hand-edited mix.
if (argv.readme) {
  const readme = path.join(REPO_DIR, "docs/performance.md");
  const text = fs.readFileSync(readme, "utf8");
  const open = "<!-- section:bench -->";
  const close = "<!-- /section:bench -->";
  const a = text.indexOf(open);
  const b = text.indexOf(close);
  if (a < 0 || b < a) throw new Error(`docs/performance.md has no ${open} ... ${close} markers`);
  const command = `node bench/run.mjs${process.argv.slice(2).filter((x) => x !== "--readme").map((x) => " " + x).join("")}`;
  const machine = `${os.cpus().length} x ${os.cpus()[0]?.model ?? "unknown CPU"}, ${round(os.totalmem() / 2 ** 30, 0)} GiB, ${os.type()} ${os.release()}`;
  const block = [
    open,
    `Latest run: \`${command}\` on ${machine}; Node ${process.version}; ${results.meta.date.slice(0, 10)}; load average at start ${results.meta.loadavgAtStart.join(" ")}. Unary load: ${results.meta.loadgen}. ${cfg.rounds} round(s) interleaved, medians; ratios are modelstub over the baseline measured in the same run.`,
    "",
    table,
    "",
    ...notes.map((n) => `- ${n}`),
    ...failures.map((x) => `- FAILED: ${x}`),
    close,
  ].join("\n");
  fs.writeFileSync(readme, text.slice(0, a) + block + text.slice(b + close.length));
  process.stderr.write("bench: wrote the table into docs/performance.md\n");
}

const outFile = argv.out ?? path.join(BENCH_DIR, "results", "latest.json");
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile + ".tmp", JSON.stringify(results, null, 2) + "\n");
fs.renameSync(outFile + ".tmp", outFile);
process.stderr.write(`bench: wrote ${path.relative(process.cwd(), outFile) || outFile}\n`);

killAll();
const missed = verdicts.filter((v) => !v.pass);
process.exitCode = failures.length ? 1 : argv.strict && missed.length ? 1 : 0;
