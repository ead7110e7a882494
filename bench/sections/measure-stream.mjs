// measureStream: GenerateStream chunks per second for a 1,000-chunk reply, floor, modelstub and GripMock interleaved.
import { cfg, log } from "../lib/bench-config.mjs";
import { gripmock, modelstubBuilt, notes } from "../lib/bench-setup.mjs";
import { nodeLoad, okOnly } from "../lib/grpc-load.mjs";
import { GENERATE_STREAM_PATH } from "../lib/paths.mjs";
import { STREAM_CHUNKS } from "../lib/payloads.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startFloor, startGripmockStream, startModelstub } from "../lib/start-servers.mjs";
import { median, ratio, round } from "../lib/stats.mjs";

/** GenerateStream chunks per second for a 1,000-chunk reply, floor, modelstub and GripMock interleaved. */
export async function measureStream() {
  const targets = [{ name: "floor", server: await startFloor() }];
  if (modelstubBuilt) targets.push({ name: "modelstub", server: await startModelstub(writeScript("stream")) });
  if (gripmock) {
    try {
      targets.push({ name: "gripmock", server: await startGripmockStream() });
    } catch (e) {
      notes.push(`GripMock did not start (stream): ${e.message}`);
    }
  }
  const runs = {};
  const expectFrames = STREAM_CHUNKS + 1;
  try {
    for (let r = 0; r < cfg.rounds; r++) {
      const order = r % 2 ? [...targets].reverse() : targets;
      for (const t of order) {
        log(`stream round ${r + 1}/${cfg.rounds} ${t.name}`);
        const j = await nodeLoad(t.server.address, {
          path: GENERATE_STREAM_PATH,
          payload: "streamRequest",
          mode: "stream",
          concurrency: 1,
          count: cfg.stream.streams,
          "duration-ms": cfg.stream.durationMs ?? 60_000,
          warmup: cfg.stream.warmup,
          "deadline-ms": 30_000,
        });
        if (!okOnly(j.codes, j.calls) || j.frames !== j.calls * expectFrames)
          throw new Error(`${t.name}: streams not whole: ${JSON.stringify(j.codes)} frames ${j.frames}/${j.calls * expectFrames}`);
        (runs[t.name] ??= []).push(j);
      }
    }
  } finally {
    for (const t of targets) await t.server.stop();
  }
  const out = { chunksPerStream: STREAM_CHUNKS, framesPerStream: expectFrames };
  for (const [name, rs] of Object.entries(runs)) {
    out[name] = {
      framesPerSec: median(rs.map((x) => x.framesPerSec)),
      streamsPerSec: median(rs.map((x) => x.rps)),
      streamP50Ms: median(rs.map((x) => x.latencyMs.p50)),
      streams: rs.reduce((a, x) => a + x.calls, 0),
      rounds: rs.map((x) => round(x.framesPerSec, 0)),
    };
  }
  for (const n of ["modelstub", "gripmock"]) if (out[n]) out[n].ratio = ratio(out[n].framesPerSec, out.floor.framesPerSec);
  return out;
}
