// Running a block: each in a process group of its own, so a process it leaves behind is found and
// killed; a foreground block is waited for, a background one until it says it is listening.
import { spawn, spawnSync } from "node:child_process";
import { BLOCK_TIMEOUT_MS, READY_TIMEOUT_MS, sleep } from "./settings.mjs";

/** True while any process of the group is alive. */
export function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
export function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* gone */
  }
}
/** Every group started and maybe still alive, killed if the runner is interrupted. */
export const live = new Set();

/** Spawns `cmd args` in a process group of its own, collecting stdout and stderr together. */
export function startGroup(cmd, argv, opts) {
  const child = spawn(cmd, argv, { ...opts, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const job = { child, pgid: child.pid, out: "", exited: false, code: null, signal: null, waiters: [] };
  live.add(job);
  const take = (d) => {
    job.out += d;
    for (const w of job.waiters) w();
  };
  child.stdout.setEncoding("utf8").on("data", take);
  child.stderr.setEncoding("utf8").on("data", take);
  job.done = new Promise((resolve) => {
    child.on("error", (err) => {
      job.out += `\n(could not start: ${err.message})`;
      job.exited = true;
      job.code = 127;
      resolve();
    });
    // "exit", not "close": a process the block left behind may hold its output open.
    child.on("exit", (code, signal) => {
      job.exited = true;
      job.code = code;
      job.signal = signal;
      for (const w of job.waiters) w();
      const closed = new Promise((r) => child.on("close", r));
      Promise.race([closed, sleep(500)]).then(() => {
        if (!groupAlive(job.pgid)) live.delete(job);
        resolve();
      });
    });
  });
  return job;
}

/** Waits for the job to end within ms; false on timeout. */
export async function waitEnd(job, ms) {
  let timer;
  const timedOut = await Promise.race([job.done.then(() => false), new Promise((r) => (timer = setTimeout(() => r(true), ms)))]);
  clearTimeout(timer);
  return !timedOut;
}

/** After a job ended: fails when its group still has processes, and kills them. */
export async function leftovers(job) {
  for (let i = 0; i < 20 && groupAlive(job.pgid); i++) await sleep(50); // let exiting children go
  if (!groupAlive(job.pgid)) return null;
  const ps = spawnSync("ps", ["-o", "pid=,args=", "-g", String(job.pgid)], { encoding: "utf8" }).stdout?.trim() ?? "";
  killGroup(job.pgid, "SIGKILL");
  return `left processes behind (killed): ${ps || "(ps found none listed)"}`;
}

/** Runs a foreground job to its end: null when it exited 0 and left nothing, else why not. */
export async function finish(job) {
  const ended = await waitEnd(job, BLOCK_TIMEOUT_MS);
  if (!ended) {
    killGroup(job.pgid, "SIGKILL");
    await job.done;
    return `timed out after ${BLOCK_TIMEOUT_MS / 1000} s (DOC_BLOCK_TIMEOUT_S)`;
  }
  const left = await leftovers(job);
  if (job.code !== 0) return `exited ${job.signal ? `on ${job.signal}` : job.code}${left ? `; ${left}` : ""}`;
  return left;
}

/** Waits until a background job printed its listening line (or ended, or the wait ran out). */
export async function ready(job) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!/listening on|listening","/i.test(job.out)) {
    if (job.exited) return `ended (${job.signal ?? job.code}) before printing a "listening on" line`;
    if (Date.now() > deadline) return `printed no "listening on" line within ${READY_TIMEOUT_MS / 1000} s`;
    await new Promise((r) => {
      const t = setTimeout(r, 100);
      job.waiters.push(() => {
        clearTimeout(t);
        r();
      });
    });
  }
  job.waiters.length = 0;
  await sleep(200); // a second listening line (HTTP) is printed right after the first
  return null;
}
