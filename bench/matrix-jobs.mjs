#!/usr/bin/env node
// Bench (issue 30): the wall time of a 60-plan `modelstub matrix run` (12 positions x 5 kinds,
// crash included, plus the clean run) with --jobs 1 and with --jobs 2, interleaved round by
// round (the order flips each round); the median of each. The executor is a Node process per
// plan (bench/matrix/executor.mjs), so most of the time is process start-up: the ratio says how
// much of it --jobs overlaps on this machine. Needs `npm run build`.
//
//   node bench/matrix-jobs.mjs [--rounds N] [--out FILE]
//
// Prints a markdown table; writes bench/results/matrix-jobs.json (or --out).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({
  options: { rounds: { type: "string", default: "1" }, out: { type: "string", default: join(root, "bench/results/matrix-jobs.json") } },
});
const rounds = Number(values.rounds);
const kinds = "unavailable,internal,resource-exhausted,timeout,crash";

function run(jobs) {
  const out = mkdtempSync(join(tmpdir(), "modelstub-bench-matrix-"));
  const args = [
    join(root, "bin/modelstub.js"),
    "matrix",
    "run",
    join(root, "bench/matrix/agent.yaml"),
    "--kinds",
    kinds,
    "--jobs",
    String(jobs),
    "--out",
    out,
    "--jsonl",
    join(out, "plans.jsonl"),
    "--",
    process.execPath,
    join(root, "bench/matrix/executor.mjs"),
  ];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (err, _stdout, stderr) => {
      const ms = performance.now() - t0;
      rmSync(out, { recursive: true, force: true });
      const summary = /(\d+) plans \(the clean run included\): (\d+) passed/.exec(stderr);
      if (err || !summary) return reject(new Error(`matrix run --jobs ${jobs} failed: ${err?.message ?? ""}\n${stderr.slice(-2000)}`));
      resolve({ ms, plans: Number(summary[1]), passed: Number(summary[2]) });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = loadavg()[0];
const times = { 1: [], 2: [] };
let plans = 0;
for (let r = 0; r < rounds; r++) {
  for (const jobs of r % 2 === 0 ? [1, 2] : [2, 1]) {
    const res = await run(jobs);
    process.stderr.write(`round ${r + 1}: --jobs ${jobs}: ${(res.ms / 1000).toFixed(1)} s, ${res.passed}/${res.plans} passed\n`);
    times[jobs].push(res.ms);
    plans = res.plans;
  }
}
const one = median(times[1]);
const two = median(times[2]);
const result = {
  date: new Date().toISOString(),
  node: process.version,
  loadAverage: load,
  rounds,
  plans,
  kinds,
  jobs1Ms: Math.round(one),
  jobs2Ms: Math.round(two),
  speedup: Number((one / two).toFixed(2)),
  perPlanMs: { jobs1: Math.round(one / plans), jobs2: Math.round(two / plans) },
};
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(
  `| matrix run, ${plans} plans (clean run included) | --jobs 1 | --jobs 2 | speed-up |\n|---|---|---|---|\n| wall time, median of ${rounds} | ${(one / 1000).toFixed(1)} s (${result.perPlanMs.jobs1} ms a plan) | ${(two / 1000).toFixed(1)} s (${result.perPlanMs.jobs2} ms a plan) | ${result.speedup}x |\n\nload average at start: ${load.toFixed(2)}\n`,
);
