// measureUnary: unary Generate req/s, p50 and p99 at each concurrency, floor, modelstub and GripMock interleaved.
import { cfg, log } from "../lib/bench-config.mjs";
import { gripmock, loadgen, modelstubBuilt, notes } from "../lib/bench-setup.mjs";
import { unaryLoad } from "../lib/grpc-load.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startFloor, startGripmock, startModelstub } from "../lib/start-servers.mjs";
import { median, ratio, round } from "../lib/stats.mjs";

/** Unary throughput and latency at each concurrency: floor, modelstub and GripMock interleaved. */
export async function measureUnary() {
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
      row[name] = {
        rps: median(rs.map((x) => x.rps)),
        p50Ms: median(rs.map((x) => x.p50)),
        p99Ms: median(rs.map((x) => x.p99)),
        meanMs: median(rs.map((x) => x.mean)),
        calls: rs.reduce((a, x) => a + x.calls, 0),
        nonOk: rs.reduce((a, x) => a + (x.calls - (x.codes?.OK ?? 0)), 0),
        rounds: rs.map((x) => round(x.rps, 0)),
      };
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
