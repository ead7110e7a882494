// measureHttpStartup: spawn to first 200 over HTTP, the HTTP floor, modelstub and mock-llm interleaved.
import { cfg } from "../lib/bench-config.mjs";
import { mockLlm, modelstubBuilt, notes } from "../lib/bench-setup.mjs";
import { probes } from "../lib/ready.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startHttpFloor, startMockLlm, startModelstubHttp } from "../lib/start-servers.mjs";
import { median, ratio, round } from "../lib/stats.mjs";

/** Spawn to first 200: floor GET /health, modelstub GET /v1/models, mock-llm GET /health. */
export async function measureHttpStartup(replyFile, mockDir) {
  const kinds = [{ name: "floor", probe: "httpHealth", spawn: () => startHttpFloor(replyFile, { waitReady: false }) }];
  if (modelstubBuilt) {
    const script = writeScript("http");
    kinds.push({ name: "modelstub", probe: "httpModels", spawn: () => startModelstubHttp(script, { waitReady: false }) });
  }
  if (mockLlm) kinds.push({ name: "mock-llm", probe: "httpHealth", spawn: () => startMockLlm(mockDir, { waitReady: false }) });
  const times = {};
  for (let i = 0; i < cfg.http.startupRuns; i++) {
    for (const k of i % 2 ? [...kinds].reverse() : kinds) {
      const s = await k.spawn();
      try {
        await probes[k.probe](s, s.address, 30_000);
        (times[k.name] ??= []).push(Number(process.hrtime.bigint() - s.spawnedAt) / 1e6);
      } catch (e) {
        notes.push(`http start-up of ${k.name} failed: ${e.message}`);
      } finally {
        await s.stop();
      }
    }
  }
  const out = {};
  for (const k of kinds) {
    const t = times[k.name] ?? [];
    out[k.name] = {
      probe: k.probe,
      medianMs: median(t),
      minMs: t.length ? Math.min(...t) : null,
      maxMs: t.length ? Math.max(...t) : null,
      runs: t.map((x) => round(x, 1)),
    };
  }
  for (const n of ["modelstub", "mock-llm"]) if (out[n]) out[n].ratio = ratio(out[n].medianMs, out.floor.medianMs);
  if (out.modelstub && out["mock-llm"]) out["mock-llm"].modelstubRatio = ratio(out.modelstub.medianMs, out["mock-llm"].medianMs);
  return out;
}
