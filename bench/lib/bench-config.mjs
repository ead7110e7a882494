// The bench's command line and configuration: argv, quick, cfg (quick and full mode), TARGETS (issue 21), sections, only, log, MODELSTUB_READY.
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
    // Run nothing: the verdicts of the results JSONs named (comma-separated) side by side, each
    // run's and the combined one (lib/combine-verdicts.mjs); with --strict, exit 1 if any run missed.
    "verdicts-from": { type: "string" },
    // The echo section: run its server under `node --cpu-prof`, profiles written to this folder.
    "echo-prof": { type: "string" },
    // A full run builds GripMock from source when it is not installed (bench/peer/build-gripmock.sh);
    // this skips that, and GripMock's targets are then not measured.
    "no-gripmock-build": { type: "boolean", default: false },
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
      inprocess: { calls: 20_000, warmup: 20_000 },
      echo: {
        calls: 5,
        warmup: 2,
        sizes: [
          { words: 192_000, batch: 8 },
          { words: 2_000, batch: 40 },
        ],
      },
      import: { runs: 5 },
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
      inprocess: { calls: 100_000, warmup: 20_000 },
      echo: {
        calls: 9,
        warmup: 2,
        sizes: [
          { words: 192_000, batch: 16 },
          { words: 2_000, batch: 100 },
        ],
      },
      import: { runs: 21 },
    };
if (argv.rounds) cfg.rounds = Number(argv.rounds);

// Issue 21's targets. Ratios are modelstub's figure over the baseline's measured in the same run;
// a target whose baseline (or modelstub) was not measured in a run is "not measured", never passed.
export const TARGETS = {
  ratioConcurrency: [16, 64], // where the HTTP floor and peer ratios are judged
  unaryThroughput: 0.9, // >= x floor req/s, at every unary concurrency
  unaryP99: 1.3, // <= x floor p99, at every unary concurrency
  unaryVsGripmock: 1.2, // >= x GripMock's req/s at ratioConcurrency (when GripMock ran)
  streaming: 0.9, // >= x floor chunks/s
  inprocessUsPerCall: 5, // <= us per literal-reply call through the in-process port (median of rounds)
  startupRatio: 1.1, // <= x the bare grpc-js floor, spawn to SERVING, on Node 20 and on Node 24
  httpThroughput: 0.7, // >= x the node:http floor's req/s at ratioConcurrency
  httpVsMockLlm: 3, // >= x mock-llm's req/s at ratioConcurrency (when mock-llm ran)
  httpStartupVsGrpc: 1, // <= HTTP start-up (first 200) over gRPC start-up (SERVING), same run
  timingErrorP99Ms: 20, // <= p99 error over the floor's at 1,000 concurrent calls
  virtualRatio: 1.2, // <= x the floor's wall time for the same calls over gRPC
  virtualInProcessWallMs: 2000, // < for 10,000 entries of 1 s through the in-process port
  scalePeakRssRatio: 1.1, // <= x the floor's peak RSS with 10,000 hung calls
  echoStreamCpu: 2, // <= x the server CPU of the same 960 KB echo unary, streamed on each front (issue 27; the 10 KB echo is reported, not judged)
  importMs: 250, // <= ms for import("modelstub") in a fresh process, the packed package in a fresh project (issue 31; aimock's beside it)
};

export const sections = ["unary", "stream", "inprocess", "startup", "virtual", "scale", "timing", "http", "echo", "import"];
export const only = argv.only ? new Set(argv.only.split(",")) : new Set(sections);
export const log = (...a) => process.stderr.write(`bench: ${a.join(" ")}\n`);
