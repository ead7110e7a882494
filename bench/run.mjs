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
// First, so its exit and signal handlers (stop every child) are in place before the set-up runs.
import { killAll } from "./lib/proc.mjs";
import fs from "node:fs";
import path from "node:path";
import { argv, log, only, sections } from "./lib/bench-config.mjs";
import { results, t0 } from "./lib/bench-setup.mjs";
import { collectPeers } from "./lib/collect-peers.mjs";
import { BENCH_DIR } from "./lib/paths.mjs";
import { printReport } from "./lib/print-report.mjs";
import { reportRows } from "./lib/report-rows.mjs";
import { round } from "./lib/stats.mjs";
import { writeReadmeTable } from "./lib/write-readme-table.mjs";
import { measureHttp } from "./sections/measure-http.mjs";
import { measureScale } from "./sections/measure-scale.mjs";
import { measureStartup } from "./sections/measure-startup.mjs";
import { measureStream } from "./sections/measure-stream.mjs";
import { measureTiming } from "./sections/measure-timing.mjs";
import { measureUnary } from "./sections/measure-unary.mjs";
import { measureVirtual } from "./sections/measure-virtual.mjs";

// Command line and configuration: lib/bench-config.mjs. Set-up (payloads, tools, what is
// available, the results object): lib/bench-setup.mjs. Servers: lib/start-servers.mjs. Load:
// lib/grpc-load.mjs. Verdicts and output: lib/report-rows.mjs, lib/print-report.mjs.

// ---------------------------------------------------------------------------------------------
// Measurements. Each returns a plain object for the JSON, and takes the servers it needs.
// Each is in sections/.

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
collectPeers();
results.meta.totalSecs = round((Date.now() - t0) / 1000, 1);
results.meta.failures = failures;

const { verdicts, rows } = reportRows();
const table = printReport(rows, failures);

// --readme: see lib/write-readme-table.mjs.
if (argv.readme) writeReadmeTable(table, failures);

const outFile = argv.out ?? path.join(BENCH_DIR, "results", "latest.json");
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile + ".tmp", JSON.stringify(results, null, 2) + "\n");
fs.renameSync(outFile + ".tmp", outFile);
process.stderr.write(`bench: wrote ${path.relative(process.cwd(), outFile) || outFile}\n`);

killAll();
const missed = verdicts.filter((v) => !v.pass);
process.exitCode = failures.length ? 1 : argv.strict && missed.length ? 1 : 0;
