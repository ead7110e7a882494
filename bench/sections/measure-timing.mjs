// measureTiming: N concurrent calls with a declared latency on the real clock, floor and modelstub interleaved.
import { cfg, log } from "../lib/bench-config.mjs";
import { modelstubBuilt, payloads } from "../lib/bench-setup.mjs";
import { okOnly } from "../lib/grpc-load.mjs";
import { GENERATE_PATH, LOADGEN } from "../lib/paths.mjs";
import { runNodeLoadgen } from "../lib/proc.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startFloor, startModelstub } from "../lib/start-servers.mjs";
import { median, round } from "../lib/stats.mjs";

/** N concurrent calls with a declared latency on the real clock: observed minus declared. */
async function timingOne(address) {
  const { calls, latencyMs } = cfg.timing;
  // One warm-up wave in the same process (JIT, connection), then the measured wave.
  const j = await runNodeLoadgen(
    LOADGEN,
    {
      target: address,
      payloads: payloads.file,
      path: GENERATE_PATH,
      concurrency: calls,
      count: calls,
      warmup: calls,
      "deadline-ms": 10_000,
      "duration-ms": 60_000,
    },
    90_000,
  );
  if (!okOnly(j.codes, calls)) throw new Error(`timing: not every call answered OK: ${JSON.stringify(j.codes)}`);
  const L = j.latencyMs;
  return {
    observedMs: { p50: L.p50, p99: L.p99, max: L.max, min: L.min },
    errorMs: { p50: L.p50 - latencyMs, p99: L.p99 - latencyMs, max: L.max - latencyMs },
  };
}

export async function measureTiming() {
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
  if (out.modelstub)
    out.modelstub.excessErrorMs = { p50: out.modelstub.errorMs.p50 - out.floor.errorMs.p50, p99: out.modelstub.errorMs.p99 - out.floor.errorMs.p99 };
  return out;
}
