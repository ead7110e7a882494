import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import type { Logger } from "../log/create-logger.js";
import { threadCpuClock, type ThreadCpuClock } from "./thread-cpu-clock.js";

/** How often the longest stall is read and, past the threshold, logged: one line a period at most. */
export const loopReportPeriodMs = 1000;
/** How often the loop's own CPU time is sampled: a stretch of work is seen to within about this. */
export const loopCpuTickMs = 10;

/** One period's figures, as the `event loop held` line gives them. */
export interface LoopPeriod {
  /** The longest the loop was late, in wall time (monitorEventLoopDelay): what callers waited. */
  longest_ms: number;
  /**
   * The most CPU time the loop's thread ran between two of its 10 ms ticks: the longest stretch
   * of the server's own work, whatever share of a core the machine gave it.
   */
  longest_cpu_ms: number;
  /** How long over the period the loop's thread was ready to run but had no core (Linux). */
  no_core_ms?: number;
  /** The longest garbage-collection pause of the period, in wall time: part of a stretch, when there is one. */
  longest_gc_ms: number;
  period_ms: number;
}

/**
 * Measures the event loop's longest stretch of work in its own CPU time: a tick every
 * loopCpuTickMs reads the thread's CPU clock, and a gap between two ticks is the work the loop did
 * before it came back to its timers (a request's synchronous work, a GC pause). Wall time between
 * ticks would also count the time the process waited for a core, which on a shared machine is the
 * scheduler's, not a request's: a 20 ms parse is 60 ms of wall time beside two busy loops on two
 * cores, and an idle server stopped 300 ms (SIGSTOP) is 300 ms late having worked for none of them.
 * The clock counts the loop's thread alone where the system gives per-thread time (Linux), so a
 * script compile in its worker is not counted; elsewhere the whole process (threadCpuClock).
 * Busy with many short callbacks, a gap is one tick's worth (about 10 ms) and the callbacks
 * running when it came due. `take()` gives the longest gap since the last take, and the time the
 * thread waited for a core meanwhile; and, in wall time, how late a tick came at most
 * (`longestLateMs`), take()'s own reading included: a stall that ends just before take() is
 * counted in that take (monitorEventLoopDelay loses it: its reset() drops the lateness its timer
 * has not recorded yet, so a stall the period's report ran right after went unreported).
 */
export function startLoopCpuMeter(clock: ThreadCpuClock = threadCpuClock()): {
  take(): { longestCpuMs: number; longestLateMs: number; noCoreMs: number | undefined };
  stop(): void;
} {
  let last = clock.read();
  let lastWall = performance.now();
  let periodStart = last;
  let longest = 0;
  let longestLate = 0;
  const tick = () => {
    const now = clock.read();
    const wall = performance.now();
    longest = Math.max(longest, now.cpuMs - last.cpuMs);
    longestLate = Math.max(longestLate, wall - lastWall - loopCpuTickMs);
    last = now;
    lastWall = wall;
  };
  const timer = setInterval(tick, loopCpuTickMs);
  timer.unref();
  return {
    take: () => {
      tick();
      const noCoreMs = last.waitMs === undefined || periodStart.waitMs === undefined ? undefined : last.waitMs - periodStart.waitMs;
      const longestCpuMs = longest;
      const longestLateMs = Math.max(0, longestLate);
      longest = 0;
      longestLate = 0;
      periodStart = last;
      return { longestCpuMs, longestLateMs, noCoreMs };
    },
    stop: () => {
      clearInterval(timer);
      clock.close();
    },
  };
}

/**
 * Logs `event loop held` (warn) for each second in which the event loop was held longer than
 * `thresholdMs`: one request that keeps the loop (a large parse, an export, a big encode) delays
 * every other session's calls by as much, and that is what changes their outcomes (a deadline
 * passes, a stream is cut). `longest_ms` is monitorEventLoopDelay's longest timer delay over the
 * period, within its 10 ms sampling: what callers waited, the time the process was not given a
 * core included. `longest_cpu_ms` is the longest stretch of the loop's own work in CPU time
 * (startLoopCpuMeter), `no_core_ms` the time the loop waited for a core over the period, and
 * `longest_gc_ms` the longest garbage-collection pause: a large `longest_ms` with a small
 * `longest_cpu_ms` is a starved machine, not a costly request.
 * The hostile suite reads these lines to bound each attack's longest stretch
 * (test/fuzz/bystander.test.ts). Returns the function that stops it.
 */
export function startLoopReport(thresholdMs: number, logger: Logger): () => void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const cpu = startLoopCpuMeter();
  let longestGcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) longestGcMs = Math.max(longestGcMs, e.duration);
  });
  gc.observe({ entryTypes: ["gc"] });
  const timer = setInterval(() => {
    // Nanoseconds; 0 when the period sampled nothing (the histogram starts empty). The meter's
    // lateness catches the stall the histogram's timer had not recorded before reset() dropped it.
    const { longestCpuMs, longestLateMs, noCoreMs } = cpu.take();
    const longestMs = Math.round(Math.max(delay.max / 1e6, longestLateMs));
    delay.reset();
    const gcMs = longestGcMs;
    longestGcMs = 0;
    if (longestMs < thresholdMs && longestCpuMs < thresholdMs) return;
    const period: LoopPeriod = {
      longest_ms: longestMs,
      longest_cpu_ms: Math.round(longestCpuMs),
      ...(noCoreMs === undefined ? {} : { no_core_ms: Math.round(noCoreMs) }),
      longest_gc_ms: Math.round(gcMs),
      period_ms: loopReportPeriodMs,
    };
    logger.warn("event loop held", { ...period });
  }, loopReportPeriodMs);
  // Never what keeps the process alive.
  timer.unref();
  return () => {
    clearInterval(timer);
    gc.disconnect();
    cpu.stop();
    delay.disable();
  };
}
