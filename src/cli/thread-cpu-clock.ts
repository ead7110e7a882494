import { closeSync, openSync, readSync } from "node:fs";

/** What a ThreadCpuClock reads: milliseconds, since some fixed moment. */
export interface ThreadCpuReading {
  /** CPU time the thread (or, where only that is known, the process) has run. */
  cpuMs: number;
  /** Time the thread was ready to run but had no core (Linux only; undefined elsewhere). */
  waitMs: number | undefined;
}

/** The CPU time of the thread that made it (the event loop's, in a server). */
export interface ThreadCpuClock {
  read(): ThreadCpuReading;
  /**
   * Where the figures come from: `schedstat` (this thread, from /proc/thread-self/schedstat, in
   * ns), `thread` (process.threadCpuUsage, this thread), or `process` (process.cpuUsage: every
   * thread of the process, helper threads too, so an over-estimate of this one's).
   */
  source: "schedstat" | "thread" | "process";
  close(): void;
}

/**
 * A clock of the calling thread's own CPU time. Wall time between two turns of the event loop
 * counts the time the process waited for a core as well as the time it worked; CPU time counts
 * only the work, which is what one request can be blamed for on a machine that other processes
 * share. Linux gives it per thread, in nanoseconds, with the time spent waiting for a core beside
 * it (/proc/thread-self/schedstat: "run time, wait time, timeslices"); the file stays open and is
 * read from offset 0 each time, a few microseconds. Elsewhere process.threadCpuUsage (Node 23.9
 * and later) or, last, process.cpuUsage, which counts the process's other threads too (GC
 * helpers, the script compile worker, libuv's pool).
 */
export function threadCpuClock(): ThreadCpuClock {
  let fd: number | undefined;
  try {
    fd = openSync("/proc/thread-self/schedstat", "r");
    const clock = schedstatClock(fd);
    clock.read();
    return clock;
  } catch {
    if (fd !== undefined) closeSync(fd);
  }
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  const source = usage ? "thread" : "process";
  const read = usage ? () => usage.call(process) : () => process.cpuUsage();
  return {
    source,
    read: () => {
      const u = read();
      return { cpuMs: (u.user + u.system) / 1000, waitMs: undefined };
    },
    close: () => {},
  };
}

function schedstatClock(fd: number): ThreadCpuClock {
  const buf = Buffer.alloc(96);
  let closed = false;
  return {
    source: "schedstat",
    read: () => {
      const n = readSync(fd, buf, 0, buf.length, 0);
      const [run, wait] = buf.toString("latin1", 0, n).split(" ");
      const cpuMs = Number(run) / 1e6;
      if (!Number.isFinite(cpuMs)) throw new Error(`unexpected schedstat: ${buf.toString("latin1", 0, n)}`);
      return { cpuMs, waitMs: Number(wait) / 1e6 };
    },
    close: () => {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}
