// Child processes of the bench: servers that print a line when they listen, one-shot tools that
// print JSON, and memory read from /proc. Everything started here is stopped here.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import readline from "node:readline";
import { PROBE } from "./paths.mjs";

const live = new Set();

/** Kills every child still running (on exit and on signals). */
export function killAll() {
  for (const c of live) {
    try {
      c.kill("SIGKILL");
    } catch {}
  }
  live.clear();
}
process.on("exit", killAll);
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => (killAll(), process.exit(130)));

/** A free 127.0.0.1 port (bound, read and released). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server. `node: true` runs `node --import probe.mjs [nodeArgs] script args` with an IPC
 * channel so stats() works (`nodeBin`: another Node binary than this one). Resolves once `readyLine` matches a stdout or stderr line (or immediately
 * when it is null), with the match.
 */
export async function startServer({
  name,
  cmd,
  args = [],
  node = false,
  nodeBin = process.execPath,
  nodeArgs = [],
  env,
  readyLine = /listening(?: on |","address":")([^\s"]+)/,
  timeoutMs = 20_000,
  cwd,
}) {
  const t0 = process.hrtime.bigint();
  const argv = node ? [...nodeArgs, "--import", PROBE, ...args] : args;
  const child = spawn(node ? nodeBin : cmd, argv, {
    cwd,
    env: { ...process.env, ...env },
    stdio: node ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  const out = [];
  const err = [];
  const server = {
    name,
    child,
    pid: child.pid,
    spawnedAt: t0,
    stdout: out,
    stderr: err,
    exited: new Promise((res) => child.once("exit", (code, signal) => (live.delete(child), res({ code, signal })))),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 3000);
      await server.exited;
      clearTimeout(t);
    },
    stats(gc = false) {
      return new Promise((resolve, reject) => {
        if (!child.send) return reject(new Error(`${name}: no IPC channel`));
        const id = Math.random();
        const t = setTimeout(() => reject(new Error(`${name}: stats timed out`)), 5000);
        const on = (m) => {
          if (m?.type === "stats" && m.id === id) {
            clearTimeout(t);
            child.off("message", on);
            resolve(m);
          }
        };
        child.on("message", on);
        child.send({ type: "stats", id, gc });
      });
    },
    mem: () => procMem(child.pid),
  };
  const errLines = readline.createInterface({ input: child.stderr });
  const lines = readline.createInterface({ input: child.stdout });
  if (!readyLine) {
    errLines.on("line", (l) => err.length < 200 && err.push(l));
    lines.on("line", (l) => out.length < 200 && out.push(l));
    return server;
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      server.stop();
      reject(new Error(`${name}: no line matching ${readyLine} within ${timeoutMs} ms; stderr: ${err.slice(-5).join(" | ")}`));
    }, timeoutMs);
    let done = false;
    // modelstub prints its listening lines on stderr; some peers print theirs on stdout.
    const onLine = (into) => (l) => {
      if (into.length < 200) into.push(l);
      const m = !done && readyLine.exec(l);
      if (m) {
        done = true;
        clearTimeout(timer);
        server.readyAt = process.hrtime.bigint();
        server.match = m;
        server.address = m[1];
        resolve(server);
      }
    };
    lines.on("line", onLine(out));
    errLines.on("line", onLine(err));
    server.exited.then(({ code, signal }) => {
      if (done) return;
      clearTimeout(timer);
      reject(new Error(`${name}: exited (${code ?? signal}) before listening; stderr: ${err.slice(-5).join(" | ")}`));
    });
  });
}

/** VmRSS and VmHWM (peak) of a process, in bytes; null when gone. */
export function procMem(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? NaN) * 1024;
    return { rss: kb("VmRSS"), peakRss: kb("VmHWM"), fds: fs.readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return null;
  }
}

/** Runs a tool to completion (bounded by timeoutMs); resolves with stdout, stderr, code. */
export function runTool(cmd, args, { timeoutMs = 120_000, env, node = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(node ? process.execPath : cmd, node ? [cmd, ...args] : args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    live.add(child);
    const out = [];
    const err = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code, signal) => {
      clearTimeout(t);
      live.delete(child);
      resolve({ code, signal, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
  });
}

/** Runs the Node load generator; resolves with its JSON result. */
export async function runNodeLoadgen(loadgen, opts, timeoutMs) {
  const args = Object.entries(opts).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const r = await runTool(loadgen, args, { node: true, timeoutMs });
  const last = r.stdout.trim().split("\n").pop();
  try {
    const j = JSON.parse(last);
    if (j.error) throw new Error(j.error);
    return j;
  } catch (e) {
    throw new Error(`loadgen failed (${r.code ?? r.signal}): ${e.message}; stderr: ${r.stderr.slice(-500)}`);
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
