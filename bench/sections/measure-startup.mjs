// measureStartup: spawn to ready (gRPC) on this Node and on Node 24: the grpc-js floor, modelstub and an
// empty Node listener on each, GripMock beside them, all interleaved.
import { cfg, log, MODELSTUB_READY } from "../lib/bench-config.mjs";
import { gripmock, modelstubBuilt, notes, payloads } from "../lib/bench-setup.mjs";
import { findNode24 } from "../lib/find-node24.mjs";
import { EMPTY_LISTENER, FLOOR_SERVER, MODELSTUB_BIN } from "../lib/paths.mjs";
import { freePort, startServer } from "../lib/proc.mjs";
import { probes } from "../lib/ready.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startGripmock } from "../lib/start-servers.mjs";
import { median, ratio, round } from "../lib/stats.mjs";

/** A Node server spawned with `nodeBin` on a free port, not waited for (the probe times it). */
function nodeKind(name, probe, nodeBin, args) {
  return {
    name,
    probe,
    spawn: async () => {
      const port = await freePort();
      const s = await startServer({ name, node: true, nodeBin, args: args(port), readyLine: null });
      s.address = `127.0.0.1:${port}`;
      return s;
    },
  };
}

/** The Node servers: the floor (health SERVING), modelstub (MODELSTUB_READY), the empty listener (TCP accept). */
function nodeKinds(nodeBin, script) {
  const kinds = [nodeKind("floor", "health", nodeBin, (port) => [FLOOR_SERVER, "--payloads", payloads.file, "--port", String(port)])];
  if (script)
    kinds.push(nodeKind("modelstub", MODELSTUB_READY, nodeBin, (port) => [MODELSTUB_BIN, "serve", "--script", script, "--grpc", `127.0.0.1:${port}`]));
  kinds.push(nodeKind("listener", "tcp", nodeBin, (port) => [EMPTY_LISTENER, "--port", String(port)]));
  return kinds;
}

/** Medians and ratios (to that Node's floor) of one Node's kinds. */
function summarizeKinds(kinds, times) {
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
  for (const n of ["modelstub", "gripmock", "listener"]) if (out[n] && out.floor) out[n].ratio = ratio(out[n].medianMs, out.floor.medianMs);
  return out;
}

/** Spawn to ready, `runs` times each, interleaved (order flipped every run). */
export async function measureStartup() {
  const script = modelstubBuilt ? writeScript("unary") : null;
  const node24 = findNode24();
  const current = { key: "current", version: process.version, kinds: nodeKinds(process.execPath, script) };
  if (gripmock) current.kinds.push({ name: "gripmock", probe: "health", spawn: () => startGripmock({ waitReady: false }) });
  const nodes = [current];
  if (node24 && node24.version !== process.version) nodes.push({ key: "node24", version: node24.version, kinds: nodeKinds(node24.bin, script) });
  const all = nodes.flatMap((n) => n.kinds.map((k) => ({ n, k })));
  const times = {};
  for (let i = 0; i < cfg.startup.runs; i++) {
    log(`startup run ${i + 1}/${cfg.startup.runs}`);
    for (const { n, k } of i % 2 ? [...all].reverse() : all) {
      const s = await k.spawn();
      try {
        await probes[k.probe](s, s.address, 30_000);
        ((times[n.key] ??= {})[k.name] ??= []).push(Number(process.hrtime.bigint() - s.spawnedAt) / 1e6);
      } catch (e) {
        notes.push(`start-up of ${k.name}${k.name === "gripmock" ? "" : ` on Node ${n.version}`} failed: ${e.message}`);
      } finally {
        await s.stop();
      }
    }
  }
  const out = { node: process.version, ...summarizeKinds(current.kinds, times.current) };
  if (nodes[1]) out.node24 = { node: nodes[1].version, ...summarizeKinds(nodes[1].kinds, times.node24) };
  else if (/^v24\./.test(process.version))
    out.node24 = { node: process.version, sameAsCurrent: true, floor: out.floor, modelstub: out.modelstub, listener: out.listener };
  else {
    out.node24 = { notMeasured: "no Node 24 binary in .cache/node/ (bash .ci/container/get-node.sh fetches it)" };
    notes.push(`start-up on Node 24 not measured: ${out.node24.notMeasured}`);
  }
  return out;
}
