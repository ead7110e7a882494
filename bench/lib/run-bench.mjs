// runBench: a bench run: the sections in order, then the report, the results JSON, and with
// --readme (or --chart FILE) the table in docs/performance.md and the ratio chart.
// Importing this module does the set-up (lib/bench-setup.mjs: payloads, tools), so bench/run.mjs
// imports it only when it measures.
import fs from "node:fs";
import path from "node:path";
import { argv, log, only, sections } from "./bench-config.mjs";
import { results, t0 } from "./bench-setup.mjs";
import { collectPeers } from "./collect-peers.mjs";
import { BENCH_DIR, RATIO_CHART } from "./paths.mjs";
import { printReport } from "./print-report.mjs";
import { killAll } from "./proc.mjs";
import { reportRows } from "./report-rows.mjs";
import { round } from "./stats.mjs";
import { writeRatioChart } from "./write-ratio-chart.mjs";
import { writeReadmeTable } from "./write-readme-table.mjs";
import { measureEcho } from "../sections/measure-echo.mjs";
import { measureHttp } from "../sections/measure-http.mjs";
import { measureImport } from "../sections/measure-import.mjs";
import { measureInprocess } from "../sections/measure-inprocess.mjs";
import { measureScale } from "../sections/measure-scale.mjs";
import { measureStartup } from "../sections/measure-startup.mjs";
import { measureStream } from "../sections/measure-stream.mjs";
import { measureTiming } from "../sections/measure-timing.mjs";
import { measureUnary } from "../sections/measure-unary.mjs";
import { measureVirtual } from "../sections/measure-virtual.mjs";

// Command line and configuration: bench-config.mjs. Set-up (payloads, tools, what is available,
// the results object): bench-setup.mjs. Servers: start-servers.mjs. Load: grpc-load.mjs.
// Verdicts and output: report-rows.mjs, print-report.mjs. Each measurement is in ../sections/,
// returns a plain object for the JSON, and takes the servers it needs.
const measures = {
  unary: measureUnary,
  stream: measureStream,
  inprocess: measureInprocess,
  startup: measureStartup,
  virtual: measureVirtual,
  scale: measureScale,
  timing: measureTiming,
  http: measureHttp,
  echo: measureEcho,
  import: measureImport,
};

export async function runBench() {
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

  // --readme: see write-readme-table.mjs.
  if (argv.readme) writeReadmeTable(table, failures);

  const json = `${JSON.stringify(results, null, 2)}\n`;
  const outFile = argv.out ?? path.join(BENCH_DIR, "results", "latest.json");
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(`${outFile}.tmp`, json);
  fs.renameSync(`${outFile}.tmp`, outFile);
  process.stderr.write(`bench: wrote ${path.relative(process.cwd(), outFile) || outFile}\n`);
  // The chart is drawn from the JSON just written, so `--chart-from` that file redraws it byte for byte.
  if (argv.readme || argv.chart) writeRatioChart(JSON.parse(json), argv.chart ?? RATIO_CHART);

  killAll();
  // A target not measured in this run (pass: null) is neither passed nor missed.
  const missed = verdicts.filter((v) => v.pass === false);
  process.exitCode = failures.length ? 1 : argv.strict && missed.length ? 1 : 0;
}
