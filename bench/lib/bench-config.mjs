// The bench's command line and configuration: argv, quick, cfg (quick and full mode), TARGETS, sections, only, log, MODELSTUB_READY.
import { parseArgs } from "node:util";

// How the start-up metric knows modelstub is up. Switch to "health" once modelstub serves
// grpc.health.v1 (the floor and GripMock already use "health").
export const MODELSTUB_READY = "health";

export const { values: argv } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    loadgen: { type: "string", default: "auto" },
    only: { type: "string" },
    rounds: { type: "string" },
    out: { type: "string" },
    strict: { type: "boolean", default: false },
    readme: { type: "boolean", default: false },
    // The ratio chart (lib/write-ratio-chart.mjs): where to write it (--readme writes it to
    // docs/performance-ratios.svg), and --chart-from: chart an existing results JSON, run nothing.
    chart: { type: "string" },
    "chart-from": { type: "string" },
  },
});
export const quick = argv.quick;

export const cfg = quick
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

export const TARGETS = {
  unaryThroughput: 0.9, // >= x floor
  unaryP99: 1.2, // <= x floor
  streaming: 0.8, // >= x floor
  startupMs: 400, // < median
  virtualWallMs: 2000, // < for 10,000 entries of 1 s
  scalePeakRssMb: 300, // < for 10,000 hung calls
  timingErrorP99Ms: 5, // < at 1,000 concurrent calls
};

export const sections = ["unary", "stream", "startup", "virtual", "scale", "timing", "http"];
export const only = argv.only ? new Set(argv.only.split(",")) : new Set(sections);
export const log = (...a) => process.stderr.write(`bench: ${a.join(" ")}\n`);
