import { readFileSync, readlinkSync } from "node:fs";

/*
 * A thread's CPU time, for the compile worker's time budget: the budget is the CPU the worker
 * spent, not the wall time since it started, so a loaded machine (a dozen busy processes sharing
 * two cores) does not refuse a script a quiet one accepts. Linux reports every thread's time in
 * /proc; elsewhere there is none, and the budget falls back to wall time.
 */

/** The calling thread's id, for threadCpuMs in another thread; undefined off Linux. */
export function currentThreadId(): number | undefined {
  try {
    return Number(readlinkSync("/proc/thread-self").split("/").pop());
  } catch {
    return undefined;
  }
}

/** Clock ticks a second: Linux's USER_HZ, 100 on every architecture Node runs on. */
const ticksPerSecond = 100;

/** CPU time (user and system) the thread `tid` of this process has used, ms; undefined once it is gone or off Linux. */
export function threadCpuMs(tid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "latin1");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
}
