import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { currentThreadId, threadCpuMs } from "../../src/script/thread-cpu-time.js";

/*
 * The compile worker's time budget counts its thread's CPU time (issue 31: a loaded machine must
 * not refuse a script a quiet one accepts). What the measure reads: CPU the thread spent, not time
 * that passed while it waited.
 */
describe.runIf(process.platform === "linux")("a thread's CPU time", () => {
  const tid = currentThreadId()!;

  it("grows by the CPU a busy thread spends", () => {
    const before = threadCpuMs(tid)!;
    const start = threadCpuMs(tid)!;
    // Spin until the thread itself has spent 200 ms, however long that takes on a loaded machine.
    while (threadCpuMs(tid)! - start < 200) Math.sqrt(Math.random());
    expect(threadCpuMs(tid)! - before).toBeGreaterThanOrEqual(200);
  });

  it("does not grow while the thread waits", async () => {
    const before = threadCpuMs(tid)!;
    await sleep(300);
    // Timers and the test runner's own work cost a few ms at most; 300 ms of waiting is not counted.
    expect(threadCpuMs(tid)! - before).toBeLessThan(150);
  });

  it("is undefined for a thread that does not exist", () => {
    expect(threadCpuMs(2 ** 31 - 1)).toBeUndefined();
  });
});
