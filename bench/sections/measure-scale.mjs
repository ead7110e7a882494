// measureScale: N calls hung until a deadline, peak RSS and handles, floor then modelstub (scaleOne measures one).
import { cfg, log } from "../lib/bench-config.mjs";
import { modelstubBuilt } from "../lib/bench-setup.mjs";
import { nodeLoad } from "../lib/grpc-load.mjs";
import { procMem, sleep } from "../lib/proc.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startFloor, startModelstub } from "../lib/start-servers.mjs";
import { ratio } from "../lib/stats.mjs";

/** N concurrent calls hanging until a deadline: peak RSS, then RSS and active handles once cut off. */
async function scaleOne(server) {
  await sleep(200);
  const before = await server.stats(true);
  const memBefore = procMem(server.pid);
  let peak = memBefore.rss;
  let peakFds = memBefore.fds;
  let peakHandles = before.handles;
  let peakHeap = before.heapUsed;
  const sampler = setInterval(() => {
    const m = procMem(server.pid);
    if (m) {
      peak = Math.max(peak, m.rss);
      peakFds = Math.max(peakFds, m.fds);
    }
  }, 25);
  const statsSampler = setInterval(() => {
    server.stats(false).then(
      (s) => ((peakHandles = Math.max(peakHandles, s.handles)), (peakHeap = Math.max(peakHeap, s.heapUsed))),
      () => {},
    );
  }, 250);
  let j;
  try {
    j = await nodeLoad(server.address, { concurrency: cfg.scale.calls, count: cfg.scale.calls, "deadline-ms": cfg.scale.deadlineMs, "duration-ms": 60_000 });
  } finally {
    clearInterval(sampler);
    clearInterval(statsSampler);
  }
  const mid = procMem(server.pid);
  await sleep(1000);
  const after = await server.stats(true);
  const memAfter = procMem(server.pid);
  const mb = (b) => b / 2 ** 20;
  return {
    codes: j.codes,
    // Client side: calls open at once, and when the last was opened (all hung together only
    // when that is before the deadline).
    maxInFlight: j.maxInFlight,
    lastIssueMs: j.lastIssueMs,
    cutOffMs: { p50: j.latencyMs.p50, p99: j.latencyMs.p99, max: j.latencyMs.max },
    rssBeforeMb: mb(memBefore.rss),
    peakRssMb: mb(Math.max(peak, mid.peakRss)), // VmHWM: the kernel's own peak
    peakGrowthMb: mb(Math.max(peak, mid.peakRss) - memBefore.rss),
    peakHeapMb: mb(peakHeap),
    peakHandles,
    rssAfterMb: mb(memAfter.rss),
    heapAfterMb: mb(after.heapUsed),
    handlesBefore: before.handles,
    handlesAfter: after.handles,
    resourcesBefore: before.resources,
    resourcesAfter: after.resources,
    handlesBackToBaseline: after.handles <= before.handles,
    fdsBefore: memBefore.fds,
    fdsPeak: peakFds,
    fdsAfter: memAfter.fds,
  };
}

export async function measureScale() {
  const out = { calls: cfg.scale.calls, deadlineMs: cfg.scale.deadlineMs };
  const floor = await startFloor("hang");
  try {
    log(`scale: floor, ${cfg.scale.calls} hung calls`);
    out.floor = await scaleOne(floor);
  } finally {
    await floor.stop();
  }
  if (modelstubBuilt) {
    const ms = await startModelstub(writeScript("hang"));
    try {
      log(`scale: modelstub, ${cfg.scale.calls} hung calls`);
      out.modelstub = await scaleOne(ms);
      out.modelstub.peakRssRatio = ratio(out.modelstub.peakRssMb, out.floor.peakRssMb);
    } finally {
      await ms.stop();
    }
  }
  return out;
}
