import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { sleep } from "./settings.mjs";

// ---------------------------------------------------------------------------------------------
// One page at a time per machine: pages use the docs' fixed ports, so runs of this script started
// side by side (several checkouts, a developer and an editor's task) take turns page by page, and
// a page starts only once those ports are free.

const LOCK = path.join(tmpdir(), "modelstub-doc-blocks.lock");
const PORTS = [50051, 50052, 8080];

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

export async function takeLock() {
  for (let said = false; ; ) {
    try {
      mkdirSync(LOCK);
      writeFileSync(path.join(LOCK, "pid"), String(process.pid));
      return;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      let owner = NaN;
      try {
        owner = Number(readFileSync(path.join(LOCK, "pid"), "utf8"));
      } catch {
        /* being written or removed */
      }
      if (Number.isInteger(owner) && !pidAlive(owner)) {
        rmSync(LOCK, { recursive: true, force: true }); // its owner died
        continue;
      }
      if (!said) console.log(`waiting for another run of this script (pid ${owner}) to finish its page`);
      said = true;
      await sleep(500);
    }
  }
}
export function dropLock() {
  try {
    if (Number(readFileSync(path.join(LOCK, "pid"), "utf8")) === process.pid) rmSync(LOCK, { recursive: true, force: true });
  } catch {
    /* not ours */
  }
}

const portInUse = (port) =>
  new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

/** Waits up to a minute for the docs' ports to be free; the busy ones after that. */
export async function portsFree() {
  let busy = [];
  for (let i = 0; i < 120; i++) {
    busy = [];
    for (const p of PORTS) if (await portInUse(p)) busy.push(p);
    if (!busy.length) return [];
    if (i === 0) console.log(`waiting for 127.0.0.1:${busy.join(", :")} to be free`);
    await sleep(500);
  }
  return busy;
}
