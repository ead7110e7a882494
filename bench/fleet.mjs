#!/usr/bin/env node
// Fleet scale figures (issue 18): unary Generate calls/s and GenerateStream frames/s through
// HAProxy (deploy/haproxy/haproxy.cfg) with 1, 2 and 3 modelstub instances in rotation, beside
// one instance called directly, all measured in one run: rounds interleaved, the order flipped
// each round, the median of the rounds reported. Three instances run throughout; "N instances"
// puts the others in maintenance through HAProxy's runtime API, so every configuration shares
// the machine with the same processes. Each measurement also records the CPU seconds each
// process used (from /proc), which says where the 2 cores went.
//
//   node bench/fleet.mjs [--rounds 3] [--duration-ms 3000] [--concurrency 32] [--sessions 64] [--loadgens 2] [--out FILE]
//
// --loadgens N load-generator processes run at once, each with --concurrency calls in flight on
// its own channel and its own sessions; their figures are summed (one Node client process tops
// out near one core, below what even one instance can serve).
//
// Needs dist/ (npm run build) and haproxy. Prints a markdown table; writes bench/results/fleet.json.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { admin, freePorts, REPO, serverStats, startHaproxy, startModelstub, waitFor } from "../test/fleet/fleet-lib.mjs";

const { values: o } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    "duration-ms": { type: "string", default: "3000" },
    concurrency: { type: "string", default: "32" },
    sessions: { type: "string", default: "64" },
    loadgens: { type: "string", default: "2" },
    out: { type: "string", default: path.join(REPO, "bench/results/fleet.json") },
  },
});
const TICK = 100; // /proc clock ticks per second (USER_HZ) on Linux
const cpuSeconds = (pid) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / TICK; // utime + stime
  } catch {
    return 0;
  }
};
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const loadAtStart = os.loadavg();
const work = fs.mkdtempSync(path.join(os.tmpdir(), "modelstub-fleet-bench-"));
const started = [];
const stopAll = () => Promise.allSettled(started.map((p) => p.stop()));
process.on("SIGINT", () => stopAll().then(() => process.exit(130)));

function loadOne(target, mode, index) {
  return new Promise((resolve, reject) => {
    const args = [
      path.join(REPO, "bench/fleet-loadgen.mjs"),
      "--target",
      target,
      "--mode",
      mode,
      "--concurrency",
      o.concurrency,
      "--sessions",
      o.sessions,
      "--session-offset",
      String(index * Number(o.sessions)),
      "--duration-ms",
      o["duration-ms"],
    ];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`loadgen exited ${code}: ${out}`))));
  });
}

/** Runs --loadgens load generators at once and sums what they did. */
async function load(target, mode) {
  const runs = await Promise.all(Array.from({ length: Number(o.loadgens) }, (_, i) => loadOne(target, mode, i)));
  const elapsedMs = Math.max(...runs.map((r) => r.elapsedMs));
  const sum = (k) => runs.reduce((a, r) => a + r[k], 0);
  const failedCodes = {};
  for (const r of runs) for (const [c, n] of Object.entries(r.failedCodes)) failedCodes[c] = (failedCodes[c] ?? 0) + n;
  return {
    calls: sum("calls"),
    failed: sum("failed"),
    failedCodes,
    frames: sum("frames"),
    elapsedMs,
    callsPerSec: sum("callsPerSec"),
    framesPerSec: sum("framesPerSec"),
    loadgenCores: sum("loadgenCores"),
  };
}

async function rotation(sock, n) {
  for (const [i, name] of ["ms1", "ms2", "ms3"].entries()) {
    for (const be of ["modelstub_grpc", "modelstub_grpc_streams", "modelstub_http"])
      await admin(sock, `set server ${be}/${name} state ${i < n ? "ready" : "maint"}`);
  }
  await waitFor(`${n} instance(s) in rotation`, async () => {
    const rows = (await serverStats(sock)).filter((r) => r.pxname === "modelstub_grpc");
    return rows.filter((r) => r.status === "UP").length === n;
  });
}

try {
  const [bind, ...ports] = await freePorts(7);
  // Each instance joins `started` as soon as it runs, so a failed start still stops the others.
  const fleet = await Promise.all(
    [0, 1, 2].map((i) =>
      startModelstub({ name: `ms${i + 1}`, grpcPort: ports[2 * i], httpPort: ports[2 * i + 1], script: path.join(REPO, "bench/fleet-script.yaml") }).then(
        (m) => (started.push(m), m),
      ),
    ),
  );
  const sock = path.join(work, "haproxy.sock");
  const lb = await startHaproxy({ bind: `127.0.0.1:${bind}`, adminSocket: sock, instances: fleet });
  started.push(lb);
  await waitFor("all three instances UP", async () => (await serverStats(sock)).filter((r) => r.pxname === "modelstub_grpc" && r.status === "UP").length === 3);

  const configs = [
    { id: "direct", label: "1 instance, called directly", target: fleet[0].grpc, n: 1 },
    { id: "lb1", label: "HAProxy + 1 instance", target: `127.0.0.1:${bind}`, n: 1 },
    { id: "lb2", label: "HAProxy + 2 instances", target: `127.0.0.1:${bind}`, n: 2 },
    { id: "lb3", label: "HAProxy + 3 instances", target: `127.0.0.1:${bind}`, n: 3 },
  ];
  const results = {};
  const pids = { haproxy: lb.pid, ms1: fleet[0].pid, ms2: fleet[1].pid, ms3: fleet[2].pid };
  const rounds = Number(o.rounds);
  console.error(
    `fleet bench: ${rounds} rounds of ${o["duration-ms"]} ms per measurement, ${o.loadgens} load generators x ${o.concurrency} calls in flight, ${o.sessions} sessions each; load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...configs].reverse() : configs;
    for (const c of order) {
      await rotation(sock, c.n);
      for (const mode of ["unary", "stream"]) {
        const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, cpuSeconds(p)]));
        const res = await load(c.target, mode);
        const cpu = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, (cpuSeconds(p) - before[k]) / (res.elapsedMs / 1000)]));
        if (res.failed) console.error(`fleet bench: ${c.id} ${mode}: ${res.failed} calls failed: ${JSON.stringify(res.failedCodes)}`);
        (results[`${c.id}.${mode}`] ??= []).push({ ...res, cpuCoresUsed: { ...cpu, loadgen: res.loadgenCores } });
        console.error(
          `round ${r + 1} ${c.id} ${mode}: ${mode === "unary" ? `${res.callsPerSec.toFixed(0)} calls/s` : `${res.framesPerSec.toFixed(0)} frames/s`}`,
        );
      }
    }
  }

  const fig = (id, mode) => median(results[`${id}.${mode}`].map((x) => (mode === "unary" ? x.callsPerSec : x.framesPerSec)));
  const cores = (id, mode) => {
    const runs = results[`${id}.${mode}`];
    return Object.fromEntries([...Object.keys(pids), "loadgen"].map((k) => [k, median(runs.map((x) => x.cpuCoresUsed[k]))]));
  };
  const rows = [];
  for (const mode of ["unary", "stream"]) {
    const base = fig("lb1", mode);
    for (const c of configs) {
      const v = fig(c.id, mode);
      const cpu = cores(c.id, mode);
      const servers = ["ms1", "ms2", "ms3"].slice(0, c.n).reduce((a, k) => a + cpu[k], 0);
      rows.push({
        mode,
        config: c.label,
        n: c.n,
        value: v,
        vsOneBehindLb: v / base,
        perInstance: v / base / c.n,
        cpu: { haproxy: c.id === "direct" ? 0 : cpu.haproxy, instances: servers, loadgen: cpu.loadgen },
      });
    }
  }
  const unit = { unary: "Generate calls/s", stream: "stream frames/s" };
  console.log(`| measurement | ${unit.unary} / ${unit.stream} | x (HAProxy + 1) | per instance | CPU cores used: HAProxy, instances, load generator |`);
  console.log("| --- | --- | --- | --- | --- |");
  for (const r of rows) {
    console.log(
      `| ${r.mode}: ${r.config} | ${Math.round(r.value)} | ${r.vsOneBehindLb.toFixed(2)} | ${r.perInstance.toFixed(2)} | ${r.cpu.haproxy.toFixed(2)}, ${r.cpu.instances.toFixed(2)}, ${r.cpu.loadgen.toFixed(2)} |`,
    );
  }
  fs.mkdirSync(path.dirname(o.out), { recursive: true });
  fs.writeFileSync(
    o.out,
    `${JSON.stringify({ meta: { date: new Date().toISOString(), cpus: os.cpus().length, loadavgAtStart: loadAtStart, loadavgAtEnd: os.loadavg(), node: process.version, rounds, durationMs: Number(o["duration-ms"]), concurrency: Number(o.concurrency), sessions: Number(o.sessions), loadgens: Number(o.loadgens) }, rows, raw: results }, null, 2)}\n`,
  );
  console.error(`fleet bench: wrote ${o.out}`);
} finally {
  await stopAll();
  fs.rmSync(work, { recursive: true, force: true });
}
