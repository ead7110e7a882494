// Preloaded into a Node server under test (`node --import probe.mjs ...`) when the bench spawns
// it with an IPC channel. Answers {type: "stats"} with memory, CPU time and active resources, so the same
// numbers come from the floor and from modelstub without either knowing about the bench.
if (typeof process.send === "function") {
  process.channel?.unref();
  process.on("message", (m) => {
    if (m?.type !== "stats") return;
    if (m.gc && typeof globalThis.gc === "function") globalThis.gc();
    const resources = {};
    for (const r of process.getActiveResourcesInfo()) resources[r] = (resources[r] ?? 0) + 1;
    const mem = process.memoryUsage();
    // CPU time of the whole process (every thread: GC helpers included), user plus system, in us.
    const cpu = process.cpuUsage();
    process.send({
      type: "stats",
      id: m.id,
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      external: mem.external,
      cpuUs: cpu.user + cpu.system,
      resources,
      handles: Object.values(resources).reduce((a, b) => a + b, 0),
    });
  });
}
