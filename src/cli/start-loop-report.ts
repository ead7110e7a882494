import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Logger } from "../log/create-logger.js";

/** How often the longest stall is read and, past the threshold, logged: one line a period at most. */
export const loopReportPeriodMs = 1000;

/**
 * Logs `event loop held` (warn) for each second in which the event loop was held longer than
 * `thresholdMs`: one request that keeps the loop (a large parse, an export, a big encode) delays
 * every other session's calls by as much, and that is what changes their outcomes (a deadline
 * passes, a stream is cut). The figure is monitorEventLoopDelay's longest timer delay over the
 * period, within its 10 ms sampling; it counts time the process was not given the CPU too (a
 * starved machine, a GC pause). The hostile suite reads these lines to bound each attack's
 * longest stall (test/fuzz/bystander.test.ts). Returns the function that stops it.
 */
export function startLoopReport(thresholdMs: number, logger: Logger): () => void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const timer = setInterval(() => {
    // Nanoseconds; 0 when the period sampled nothing (the histogram starts empty).
    const longestMs = Math.round(delay.max / 1e6);
    delay.reset();
    if (longestMs >= thresholdMs) logger.warn("event loop held", { longest_ms: longestMs, period_ms: loopReportPeriodMs });
  }, loopReportPeriodMs);
  // Never what keeps the process alive.
  timer.unref();
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}
