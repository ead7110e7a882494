// measureVirtual: virtual time, N entries of 1 s under --clock virtual, over gRPC and through the in-process port.
import path from "node:path";
import { cfg } from "../lib/bench-config.mjs";
import { modelstubBuilt, notes } from "../lib/bench-setup.mjs";
import { nodeLoad, okOnly } from "../lib/grpc-load.mjs";
import { BENCH_DIR } from "../lib/paths.mjs";
import { runTool } from "../lib/proc.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startFloor, startModelstub } from "../lib/start-servers.mjs";
import { ratio } from "../lib/stats.mjs";

const VIRTUAL_INPROCESS = path.join(BENCH_DIR, "load", "virtual-inprocess.mjs");

/** Virtual time: N entries declaring 1 s each, served under --clock virtual; wall time of the calls. */
export async function measureVirtual() {
  const { entries, concurrency } = cfg.virtual;
  const floor = await startFloor();
  let floorRun;
  try {
    floorRun = await nodeLoad(floor.address, { concurrency, count: entries, "duration-ms": 120_000 });
  } finally {
    await floor.stop();
  }
  const out = { entries, declaredPerEntryMs: 1000, declaredTotalMs: entries * 1000, concurrency, floor: { wallMs: floorRun.elapsedMs } };
  if (!modelstubBuilt) return out;
  const spawnAt = process.hrtime.bigint();
  const ms = await startModelstub(writeScript("virtual", entries), { clock: "virtual" });
  const startMs = Number(ms.readyAt - spawnAt) / 1e6;
  try {
    const j = await nodeLoad(ms.address, { concurrency, count: entries, "duration-ms": 120_000 });
    if (!okOnly(j.codes, entries)) throw new Error(`virtual: not every call answered OK: ${JSON.stringify(j.codes)}`);
    out.modelstub = { wallMs: j.elapsedMs, startToListeningMs: startMs, ratio: ratio(j.elapsedMs, floorRun.elapsedMs), p99Ms: j.latencyMs.p99 };
  } finally {
    await ms.stop();
  }
  // The same script through the in-process port (no network), sequentially: the clock's own cost.
  const r = await runTool(VIRTUAL_INPROCESS, ["--script", writeScript("virtual", entries), "--count", String(entries)], { node: true, timeoutMs: 120_000 });
  try {
    const j = JSON.parse(r.stdout.trim().split("\n").pop());
    if (j.ok !== entries) throw new Error(`not every call answered: ${JSON.stringify(j.errors)}`);
    out.inProcess = { wallMs: j.wallMs, loadMs: j.loadMs, virtualMs: j.virtualMs };
  } catch (e) {
    notes.push(`virtual time in process failed: ${e.message}; ${r.stderr.slice(-300)}`);
  }
  return out;
}
