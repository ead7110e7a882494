#!/usr/bin/env node
// modelstub's benchmark suite (issue 9). Every figure is measured side by side with its
// baseline in the same run, and reported as a ratio plus absolute numbers: the machine is shared
// and noisy, so only same-run ratios compare across runs.
//
//   node bench/run.mjs [--quick] [--loadgen auto|ghz|node] [--only unary,stream,...,http]
//                      [--rounds N] [--out FILE] [--strict] [--readme] [--chart FILE] [--echo-prof DIR]
//   node bench/run.mjs --chart-from RESULTS.json [--chart FILE]
//   node bench/run.mjs --verdicts-from RUN1.json,RUN2.json [--strict]
//
// Servers and load generators each run in their own process; this one only orchestrates.
// Writes bench/results/latest.json and prints a markdown table. --strict exits 1 when a target
// is missed (CI runs --quick without it: it checks the bench runs end to end, not speed).
// --readme also writes the table into docs/performance.md and the ratio chart to
// docs/performance-ratios.svg (--chart FILE: elsewhere). --chart-from measures nothing: it draws
// the chart of an existing results JSON (to docs/performance-ratios.svg unless --chart says).
// --verdicts-from measures nothing either: it prints the targets' verdicts of several runs side by
// side, a target met in one and missed in another reported as both; --strict then exits 1 when any
// run missed any target (issue 33, item 5).
// First, so its exit and signal handlers (stop every child) are in place before the set-up runs.
import { killAll } from "./lib/proc.mjs";
import fs from "node:fs";
import { argv } from "./lib/bench-config.mjs";
import { RATIO_CHART } from "./lib/paths.mjs";
import { writeRatioChart } from "./lib/write-ratio-chart.mjs";
import { combineVerdicts, verdictsTable } from "./lib/combine-verdicts.mjs";

if (argv["chart-from"]) {
  writeRatioChart(JSON.parse(fs.readFileSync(argv["chart-from"], "utf8")), argv.chart ?? RATIO_CHART);
  killAll();
} else if (argv["verdicts-from"]) {
  const files = argv["verdicts-from"].split(",").filter(Boolean);
  const runs = files.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  process.stdout.write(
    `${verdictsTable(
      runs,
      files.map((f, i) => `run ${i + 1} (${f})`),
    )}\n`,
  );
  process.exitCode = argv.strict && combineVerdicts(runs).failed ? 1 : 0;
  killAll();
} else {
  // The run (and the set-up its import does): lib/run-bench.mjs.
  const { runBench } = await import("./lib/run-bench.mjs");
  await runBench();
}
