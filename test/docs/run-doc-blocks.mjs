#!/usr/bin/env node
// Runs the documentation: every code block a reader would paste, in README.md and docs/*.md, is
// executed against a real server, so a snippet that breaks fails CI (.ci/run.d/37-doc-blocks.sh).
//
//   node test/docs/run-doc-blocks.mjs [--list] [--keep] [PAGE.md ...]      (no pages: all of them)
//
// A block is marked by an HTML comment on the line before its fence (other comment lines, such
// as `<!-- snippet: PATH -->`, may stand between the marker and the fence):
//
//   <!-- run -->               a sh/bash block, run with bash (set -euo pipefail); must exit 0
//   <!-- run: background -->   a sh/bash block that starts a server and never returns: started in
//                              the background; the next block runs once it has printed a
//                              "listening on" line; SIGTERM at the end of the page; must exit 0
//   <!-- run: file NAME -->    any block: its text is written to NAME in the page's folder
//   <!-- run: ts -->           a ts block: type-checked with tsc --strict (module nodenext) in a
//                              project where the packed checkout (npm pack) is installed, then run
//                              with node; must exit 0
//   <!-- not run: REASON -->   a block CI does not run; REASON is printed
//
// A sh, bash, shell, console, ts, js, python, go or rust block with none of these fails the
// check, naming page and line. Other blocks (yaml, json, text, proto, ...) may be unmarked.
//
// Each page runs in order in a scratch folder of its own that stands for the root of a checkout
// (a copy of examples/ and proto/, bin/modelstub.js and a package.json naming it, so
// `npx modelstub` works as in a checkout, and node_modules/.bin/buf), kept for the whole page.
// On PATH: `modelstub` (this checkout's bin/modelstub.js, as after `npm link` or a global
// install), grpcurl (the interop suite's pinned build in .cache/bin), curl and node.
// Blocks also get MODELSTUB_DOCS_REPO (this checkout) and MODELSTUB_DOCS_TARBALL (its npm pack).
// Every block runs in a process group of its own: one that leaves a process behind fails, and
// the process is killed. Pages run one after another, so the default ports the docs show
// (127.0.0.1:50051 for gRPC, 127.0.0.1:8080 for HTTP) are free for each page's server.
//
// Each page's relative links are checked too: the file must exist, and a #anchor must be a
// heading of it (one `links` line per page).
//
// Prints one `ok`/`FAIL`/`not run` line per block (page:line), the first lines of output of a
// failure, and ends with `N passed, N failed`; exits 1 when anything failed.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const listOnly = args.includes("--list");
const keep = args.includes("--keep");
const pageArgs = args.filter((a) => !a.startsWith("--"));
const BLOCK_TIMEOUT_MS = Number(process.env.DOC_BLOCK_TIMEOUT_S ?? 300) * 1000;
const READY_TIMEOUT_MS = Number(process.env.DOC_READY_TIMEOUT_S ?? 60) * 1000;
const STOP_TIMEOUT_MS = 30_000;
const OUTPUT_LINES = 25;

/** Languages a reader pastes into a shell or a project: such a block must say whether CI runs it. */
const PASTED = new Set(["sh", "bash", "shell", "zsh", "console", "ts", "typescript", "tsx", "js", "javascript", "mjs", "cjs", "python", "py", "go", "rust", "rs"]);
const SHELL = new Set(["sh", "bash", "shell"]);
const TS = new Set(["ts", "typescript"]);

// ---------------------------------------------------------------------------------------------
// Parsing

/**
 * The fenced blocks of a markdown text: {line (1-based, of the opening fence), lang, text, markers}.
 * markers are the HTML comments standing on the lines right before the fence.
 */
export function parseBlocks(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)/.exec(lines[i]);
    if (!open) continue;
    const fence = open[2];
    const body = [];
    let j = i + 1;
    const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    while (j < lines.length && !close.test(lines[j])) body.push(lines[j++]);
    const markers = [];
    for (let k = i - 1; k >= 0 && /^\s*<!--.*-->\s*$/.test(lines[k]); k--) markers.unshift(lines[k].trim());
    blocks.push({ line: i + 1, lang: open[3].toLowerCase(), text: body.join("\n") + "\n", markers });
    i = j;
  }
  return blocks;
}

/** What a block's markers ask: {kind: run|background|file|ts|not-run|none|bad, ...}. */
export function kindOf(block) {
  const found = [];
  for (const m of block.markers) {
    const inner = /^<!--\s*(.*?)\s*-->$/.exec(m)[1];
    let r;
    if (inner === "run") found.push({ kind: "run" });
    else if (inner === "run: background") found.push({ kind: "background" });
    else if (inner === "run: ts") found.push({ kind: "ts" });
    else if ((r = /^run: file (\S+)$/.exec(inner))) found.push({ kind: "file", name: r[1] });
    else if ((r = /^not run:\s*(.+)$/.exec(inner))) found.push({ kind: "not-run", reason: r[1] });
    else if (/^(run|not run)\b/.test(inner)) found.push({ kind: "bad", why: `unknown marker ${m} (expected run, run: background, run: file NAME, run: ts, not run: REASON)` });
  }
  if (found.length > 1) return { kind: "bad", why: `${found.length} run markers on one block` };
  const k = found[0] ?? { kind: "none" };
  if ((k.kind === "run" || k.kind === "background") && !SHELL.has(block.lang)) return { kind: "bad", why: `<!-- run${k.kind === "background" ? ": background" : ""} --> needs a sh or bash block, not \`${block.lang || "(no language)"}\`` };
  if (k.kind === "ts" && !TS.has(block.lang)) return { kind: "bad", why: `<!-- run: ts --> needs a ts block, not \`${block.lang || "(no language)"}\`` };
  if (k.kind === "file" && (path.isAbsolute(k.name) || k.name.split(/[\\/]/).includes(".."))) return { kind: "bad", why: `run: file ${k.name}: the name must stay inside the page's folder` };
  if (k.kind === "none" && PASTED.has(block.lang)) return { kind: "bad", why: `an unmarked \`${block.lang}\` block: mark it <!-- run -->, <!-- run: background -->, <!-- run: ts -->, <!-- run: file NAME --> or <!-- not run: REASON -->` };
  return k;
}


// ---------------------------------------------------------------------------------------------
// Links: a page's relative links must reach a file, and a `#anchor` a heading of that page.

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, "").replace(/ /g, "-");

/** The anchors of a markdown file's headings (a repeated heading gets -1, -2, ...). */
export function anchorsOf(markdown) {
  const seen = new Map();
  const anchors = new Set();
  let fence = null;
  for (const line of markdown.split("\n")) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1];
      else if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, "") === "") fence = null;
      continue;
    }
    if (fence !== null) continue;
    const h = /^#{1,6} (.*)$/.exec(line);
    if (!h) continue;
    const s = slug(h[1]);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    anchors.add(n ? `${s}-${n}` : s);
  }
  for (const m of markdown.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

/** The broken relative links of a page: ["target: why", ...]. */
export function brokenLinks(page, markdown) {
  const broken = [];
  const withoutCode = markdown.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ {0,3}\1[`~]*\s*$/gm, "").replace(/`[^`\n]*`/g, "");
  for (const m of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [file, anchor] = target.split("#");
    const resolved = file ? path.resolve(path.dirname(page), decodeURIComponent(file)) : page;
    if (file && !existsSync(resolved)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor && resolved.endsWith(".md") && !anchorsOf(readFileSync(resolved, "utf8")).has(anchor)) broken.push(`${target}: no heading with that anchor`);
  }
  return broken;
}


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

async function takeLock() {
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
function dropLock() {
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
async function portsFree() {
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

// ---------------------------------------------------------------------------------------------
// Running

function pagesToRun() {
  if (pageArgs.length) return pageArgs.map((p) => path.resolve(p));
  const docs = path.join(ROOT, "docs");
  const pages = [path.join(ROOT, "README.md")];
  if (existsSync(docs)) pages.push(...readdirSync(docs).filter((f) => f.endsWith(".md")).sort().map((f) => path.join(docs, f)));
  return pages;
}

const rel = (p) => path.relative(ROOT, p) || p;
const firstLines = (out) => {
  const lines = out.replace(/\s+$/, "").split("\n");
  const shown = lines.length > OUTPUT_LINES ? [...lines.slice(0, OUTPUT_LINES), `... (${lines.length - OUTPUT_LINES} more lines)`] : lines;
  return shown.map((l) => `     ${l}`).join("\n");
};

/** True while any process of the group is alive. */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* gone */
  }
}
/** Every group started and maybe still alive, killed if the runner is interrupted. */
const live = new Set();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Spawns `cmd args` in a process group of its own, collecting stdout and stderr together. */
function startGroup(cmd, argv, opts) {
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
async function waitEnd(job, ms) {
  let timer;
  const timedOut = await Promise.race([job.done.then(() => false), new Promise((r) => (timer = setTimeout(() => r(true), ms)))]);
  clearTimeout(timer);
  return !timedOut;
}

/** After a job ended: fails when its group still has processes, and kills them. */
async function leftovers(job) {
  for (let i = 0; i < 20 && groupAlive(job.pgid); i++) await sleep(50); // let exiting children go
  if (!groupAlive(job.pgid)) return null;
  const ps = spawnSync("ps", ["-o", "pid=,args=", "-g", String(job.pgid)], { encoding: "utf8" }).stdout?.trim() ?? "";
  killGroup(job.pgid, "SIGKILL");
  return `left processes behind (killed): ${ps || "(ps found none listed)"}`;
}

/** Runs a foreground job to its end: null when it exited 0 and left nothing, else why not. */
async function finish(job) {
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
async function ready(job) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!/listening on/i.test(job.out)) {
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

// The environment every block runs in: no MODELSTUB_* setting of CI's own leaks into a server.
function blockEnv(tools, tarball) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("MODELSTUB_") && !k.startsWith("npm_")) env[k] = v;
  env.PATH = `${tools}${path.delimiter}${process.env.PATH}`;
  env.MODELSTUB_DOCS_REPO = ROOT;
  if (tarball) env.MODELSTUB_DOCS_TARBALL = tarball;
  env.NO_COLOR = "1";
  return env;
}

function setUpTools(tmp) {
  const tools = path.join(tmp, "bin");
  mkdirSync(tools, { recursive: true });
  const wrapper = path.join(tools, "modelstub");
  writeFileSync(wrapper, `#!/bin/sh\nexec node ${JSON.stringify(path.join(ROOT, "bin/modelstub.js"))} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const onPath = spawnSync("sh", ["-c", "command -v grpcurl"], { encoding: "utf8" }).status === 0;
  const built = path.join(ROOT, ".cache/bin/grpcurl");
  if (!existsSync(built) && !onPath && spawnSync("sh", ["-c", "command -v go"]).status === 0) {
    console.log("setup: building the pinned grpcurl (test/interop/build.sh grpcurl)");
    spawnSync("bash", [path.join(ROOT, "test/interop/build.sh"), "grpcurl"], { stdio: "inherit" });
  }
  if (existsSync(built)) symlinkSync(built, path.join(tools, "grpcurl"));
  else if (!onPath) console.log("setup: no grpcurl (needs Go for test/interop/build.sh grpcurl): blocks that call it will fail");
  return tools;
}

function pack(tmp) {
  const r = spawnSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", tmp], { cwd: ROOT, encoding: "utf8" });
  const name = r.stdout.trim().split("\n").pop();
  if (r.status !== 0 || !name) throw new Error(`npm pack failed: ${r.stderr}`);
  return path.join(tmp, name);
}

/** The TypeScript project for `run: ts` blocks, made on first use: null and an error when it cannot be. */
let tsProject;
function tsProjectFor(tmp, tarball) {
  if (tsProject) return tsProject;
  const dir = path.join(tmp, "ts-project");
  mkdirSync(path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "doc-blocks", private: true, type: "module" }) + "\n");
  const dev = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).devDependencies ?? {};
  const pins = ["typescript", "@types/node", "openai"].filter((p) => dev[p]).map((p) => `${p}@${dev[p]}`);
  console.log(`setup: npm install ${path.basename(tarball)} ${pins.join(" ")} (the project for ts blocks)`);
  const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarball, ...pins], { cwd: dir, encoding: "utf8" });
  tsProject = r.status === 0 ? { dir } : { error: `npm install in the ts project failed:\n${r.stdout}${r.stderr}` };
  return tsProject;
}

async function runPage(page, tmp, tools, tarball, tally) {
  const name = rel(page);
  const blocks = parseBlocks(readFileSync(page, "utf8"));
  const slug = name.replace(/[^A-Za-z0-9]+/g, "-");
  const dir = path.join(tmp, "pages", slug);
  mkdirSync(dir, { recursive: true });
  // The folder stands for a checkout: its examples and protos, bin/modelstub.js, a package.json
  // naming that bin (so `npx modelstub` runs it, as in a checkout), and buf in node_modules/.bin
  // (the docs' `npx buf curl` examples). No node_modules/.bin/modelstub: a checkout has none.
  for (const d of ["examples", "proto"]) cpSync(path.join(ROOT, d), path.join(dir, d), { recursive: true });
  mkdirSync(path.join(dir, "bin"), { recursive: true });
  symlinkSync(path.join(ROOT, "bin/modelstub.js"), path.join(dir, "bin/modelstub.js"));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "modelstub", private: true, type: "module", bin: { modelstub: "bin/modelstub.js" } }, null, 2) + "\n");
  mkdirSync(path.join(dir, "node_modules/.bin"), { recursive: true });
  const buf = path.join(ROOT, "node_modules/.bin/buf");
  if (existsSync(buf)) symlinkSync(buf, path.join(dir, "node_modules/.bin/buf"));
  const scripts = path.join(tmp, "scripts", slug);
  mkdirSync(scripts, { recursive: true });
  const env = blockEnv(tools, tarball);
  const background = [];
  const ok = (b, what) => {
    tally.passed++;
    console.log(`ok      ${name}:${b.line} ${what}`);
  };
  const fail = (b, what, why, out) => {
    tally.failed++;
    console.log(`FAIL    ${name}:${b.line} ${what}: ${why}${out && out.trim() ? "\n" + firstLines(out) : ""}`);
  };

  const broken = brokenLinks(page, readFileSync(page, "utf8"));
  if (broken.length) {
    tally.failed++;
    console.log(`FAIL    ${name}: links: ${broken.length} broken\n${broken.map((x) => `     ${x}`).join("\n")}`);
  } else {
    tally.passed++;
    console.log(`ok      ${name}: links`);
  }

  for (const b of blocks) {
    const k = kindOf(b);
    const head = b.text.split("\n").find((l) => l.trim() && !l.trim().startsWith("#"))?.trim().slice(0, 70) ?? "";
    const what = `(${k.kind === "none" ? b.lang || "text" : k.kind}) ${head}`;
    if (k.kind === "none") continue;
    if (k.kind === "bad") {
      fail(b, `(${b.lang || "no language"})`, k.why);
      continue;
    }
    if (k.kind === "not-run") {
      tally.notRun++;
      console.log(`not run ${name}:${b.line} (${b.lang}) ${head}: ${k.reason}`);
      continue;
    }
    if (listOnly) {
      console.log(`would   ${name}:${b.line} ${what}`);
      continue;
    }
    if (k.kind === "file") {
      const target = path.join(dir, k.name);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, b.text);
      ok(b, `(file ${k.name})`);
      continue;
    }
    if (k.kind === "run" || k.kind === "background") {
      const script = path.join(scripts, `L${b.line}.sh`);
      // A background block's bash outlives the SIGTERM sent to its group: its server gets the
      // signal, shuts down, and the block's own exit status is the server's.
      writeFileSync(script, `${k.kind === "background" ? "trap 'true' TERM\n" : ""}set -euo pipefail\n${b.text}`);
      const job = startGroup("bash", [script], { cwd: dir, env });
      if (k.kind === "run") {
        const why = await finish(job);
        if (why) fail(b, what, why, job.out);
        else ok(b, what);
      } else {
        const why = await ready(job);
        if (why) {
          killGroup(job.pgid, "SIGKILL");
          fail(b, what, why, job.out);
        } else {
          console.log(`started ${name}:${b.line} ${what}`);
          background.push({ b, what, job });
        }
      }
      continue;
    }
    if (k.kind === "ts") {
      const project = tsProjectFor(tmp, tarball);
      if (project.error) {
        fail(b, what, project.error);
        continue;
      }
      const base = `${slug}-L${b.line}`;
      writeFileSync(path.join(project.dir, "src", `${base}.ts`), b.text);
      const tsc = path.join(project.dir, "node_modules/typescript/bin/tsc");
      const check = spawnSync(
        "node",
        [tsc, "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--skipLibCheck", "--outDir", "out", `src/${base}.ts`],
        { cwd: project.dir, encoding: "utf8" },
      );
      if (check.status !== 0) {
        fail(b, what, "tsc --strict failed", check.stdout + check.stderr);
        continue;
      }
      const job = startGroup("node", [path.join(project.dir, "out", `${base}.js`)], { cwd: dir, env });
      const why = await finish(job);
      if (why) fail(b, what, why, job.out);
      else ok(b, what);
    }
  }

  // The page's servers: SIGTERM to each group, then each must exit 0 and leave nothing.
  for (const { b, what, job } of background) {
    if (job.exited) {
      fail(b, what, `ended on its own before the page did (${job.signal ?? job.code})`, job.out);
      await leftovers(job);
      continue;
    }
    killGroup(job.pgid, "SIGTERM");
    if (!(await waitEnd(job, STOP_TIMEOUT_MS))) {
      killGroup(job.pgid, "SIGKILL");
      await job.done;
      fail(b, what, `did not stop within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM`, job.out);
      continue;
    }
    const left = await leftovers(job);
    if (job.code !== 0) fail(b, what, `exited ${job.signal ? `on ${job.signal}` : job.code} after SIGTERM`, job.out);
    else if (left) fail(b, what, left, job.out);
    else ok(b, `${what} (stopped by SIGTERM, exit 0)`);
  }
}

async function main() {
  const tally = { passed: 0, failed: 0, notRun: 0 };
  const tmp = mkdtempSync(path.join(tmpdir(), "modelstub-docs-"));
  let tools;
  let tarball;
  if (!listOnly) {
    tools = setUpTools(tmp);
    tarball = pack(tmp);
  } else tools = path.join(tmp, "bin");
  const stop = () => {
    // Ctrl-C or CI's kill: no page's server may outlive the runner.
    console.log("\ninterrupted");
    for (const job of live) killGroup(job.pgid, "SIGKILL");
    dropLock();
    if (!keep) rmSync(tmp, { recursive: true, force: true });
    process.exit(130);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    for (const page of pagesToRun()) {
      if (!existsSync(page)) {
        tally.failed++;
        console.log(`FAIL    ${rel(page)}: no such page`);
        continue;
      }
      console.log(`\n== ${rel(page)}`);
      if (listOnly) {
        await runPage(page, tmp, tools, tarball, tally);
        continue;
      }
      await takeLock();
      try {
        const busy = await portsFree();
        if (busy.length) console.log(`(127.0.0.1:${busy.join(", :")} still in use: this page's servers may fail to start)`);
        await runPage(page, tmp, tools, tarball, tally);
      } finally {
        dropLock();
      }
    }
  } finally {
    if (keep) console.log(`\nscratch folders kept in ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`\n${tally.notRun} block(s) not run, as marked`);
  console.log(`${tally.passed} passed, ${tally.failed} failed`);
  process.exitCode = tally.failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
