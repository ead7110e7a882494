// gRPC load runs: unaryLoad (ghz or the Node load generator), nodeLoad (the Node load generator), okOnly.
import { GENERATE_PATH, LOADGEN, PROTOSET } from "./paths.mjs";
import { runNodeLoadgen, runTool } from "./proc.mjs";
import { ghz, loadgen, payloads } from "./bench-setup.mjs";

// ---------------------------------------------------------------------------------------------
// Load.

/** One unary load run with the chosen generator: { rps, p50, p99, mean, calls, codes }. */
export async function unaryLoad(address, concurrency, { count, durationMs, warmup }) {
  if (loadgen === "ghz") {
    const base = [
      "--insecure",
      "--protoset",
      PROTOSET,
      "--call",
      "modelstub.v1.ModelService.Generate",
      "--binary-file",
      payloads.requestBin,
      "-c",
      String(concurrency),
      "--connections",
      "1",
      "-t",
      "10s",
      "-O",
      "json",
    ];
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
    {
      target: address,
      path: GENERATE_PATH,
      payloads: payloads.file,
      concurrency,
      count: durationMs ? 5_000_000 : count,
      "duration-ms": durationMs ?? 60_000,
      warmup: warmup ?? 0,
      "deadline-ms": 10_000,
    },
    (durationMs ?? 60_000) + 90_000,
  );
  return { tool: "node", rps: j.rps, calls: j.calls, codes: j.codes, mean: j.latencyMs.mean, p50: j.latencyMs.p50, p99: j.latencyMs.p99 };
}

export function nodeLoad(address, opts, timeoutMs = 180_000) {
  return runNodeLoadgen(LOADGEN, { target: address, payloads: payloads.file, path: GENERATE_PATH, ...opts }, timeoutMs);
}

export const okOnly = (codes, n) => (codes?.OK ?? 0) === n;
