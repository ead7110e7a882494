/**
 * Notices how long this process could not run before it read a call.
 *
 * A caller's deadline starts when it sends. The server only learns of the call when its event
 * loop reads it, and a loop that was paused (GC, a starved CPU, SIGSTOP) reads late: the caller's
 * deadline kept running meanwhile. Nothing in a request says how long it waited in the socket, so
 * a cheap periodic tick records when the loop last ran; at a call's start, the time since then is
 * how long the call may have been waiting unseen. The transport adds it to the slack with which a
 * cut-off near the deadline counts as the deadline (see call-signal.ts).
 *
 * One tick serves every server in the process; it runs while at least one is listening and never
 * keeps the process alive on its own (unref).
 */

/** How often the tick runs, in ms. A stall shorter than this is within the rule's slack anyway. */
export const loopTickMs = 10;

let users = 0;
let timer: NodeJS.Timeout | undefined;
/** When the tick last ran. */
let lastRun = 0;
/**
 * The last moment the loop is known to have been free to read a socket. After a tick that ran
 * late, that is the tick before it: the loop may have been stuck since just after that one.
 */
let lastFree = 0;

function tick(): void {
  const now = performance.now();
  // Timers are seldom exact: a tick up to half a period late still says the loop was free.
  lastFree = now - lastRun <= loopTickMs * 1.5 ? now : lastRun;
  lastRun = now;
}

/** Starts the tick (shared, counted); returns the function that stops this user's share. */
export function watchLoop(): () => void {
  if (users++ === 0) {
    lastRun = lastFree = performance.now();
    timer = setInterval(tick, loopTickMs);
    timer.unref();
  }
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--users === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/**
 * Milliseconds the loop may have been unable to read a call that it reads now: the time since it
 * was last known free. 0 while no server watches the loop. Normally under one tick period; after a
 * pause, at least the pause.
 */
export function loopStallMs(): number {
  if (users === 0) return 0;
  return Math.max(0, performance.now() - lastFree);
}
