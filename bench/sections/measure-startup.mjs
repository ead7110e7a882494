// measureStartup: spawn to ready (gRPC), floor, modelstub and GripMock interleaved.
import { cfg, MODELSTUB_READY } from "../lib/bench-config.mjs";
import { gripmock, modelstubBuilt, notes, payloads } from "../lib/bench-setup.mjs";
import { FLOOR_SERVER, MODELSTUB_BIN } from "../lib/paths.mjs";
import { freePort, startServer } from "../lib/proc.mjs";
import { probes } from "../lib/ready.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startGripmock } from "../lib/start-servers.mjs";
import { median, ratio, round } from "../lib/stats.mjs";

/** Spawn to ready, `runs` times each, interleaved: floor (health), modelstub, GripMock (health). */
export async function measureStartup() {
  const kinds = [
    {
      name: "floor",
      probe: "health",
      spawn: async () => {
        const port = await freePort();
        const s = await startServer({ name: "floor", node: true, args: [FLOOR_SERVER, "--payloads", payloads.file, "--port", String(port)], readyLine: null });
        s.address = `127.0.0.1:${port}`;
        return s;
      },
    },
  ];
  if (modelstubBuilt) {
    const script = writeScript("unary");
    kinds.push({
      name: "modelstub",
      probe: MODELSTUB_READY,
      spawn: async () => {
        const port = await freePort();
        const s = await startServer({ name: "modelstub", node: true, args: [MODELSTUB_BIN, "serve", "--script", script, "--grpc", `127.0.0.1:${port}`], readyLine: null });
        s.address = `127.0.0.1:${port}`;
        return s;
      },
    });
  }
  if (gripmock) kinds.push({ name: "gripmock", probe: "health", spawn: () => startGripmock({ waitReady: false }) });
  const times = {};
  for (let i = 0; i < cfg.startup.runs; i++) {
    for (const k of kinds) {
      const s = await k.spawn();
      try {
        await probes[k.probe](s, s.address, 30_000);
        const ms = Number(process.hrtime.bigint() - s.spawnedAt) / 1e6;
        (times[k.name] ??= []).push(ms);
      } catch (e) {
        notes.push(`start-up of ${k.name} failed: ${e.message}`);
      } finally {
        await s.stop();
      }
    }
  }
  const out = {};
  for (const k of kinds) {
    const t = times[k.name] ?? [];
    out[k.name] = { probe: k.probe, medianMs: median(t), minMs: Math.min(...t), maxMs: Math.max(...t), runs: t.map((x) => round(x, 1)) };
  }
  for (const n of ["modelstub", "gripmock"]) if (out[n]) out[n].ratio = ratio(out[n].medianMs, out.floor.medianMs);
  return out;
}
