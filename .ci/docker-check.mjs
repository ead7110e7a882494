#!/usr/bin/env node
// Carries out the Dockerfile without a Docker engine, so a broken step fails CI:
//  - the build context is the tracked files minus .dockerignore;
//  - each stage gets a fresh temporary root that stands for the image's /; WORKDIR, COPY (from
//    the context or --from a stage), ENV and RUN run there with the same commands, the
//    production install included. A RUN step runs in its WORKDIR with bash, and an absolute
//    path in it (a word starting with /, like `mkdir /episodes`) is taken inside the stage root;
//  - nothing outside the stage may stand in for what it does not install: NODE_PATH is cleared,
//    and the check fails when a folder above its temporary root holds node_modules (Node would
//    resolve a missing production dependency from there); set TMPDIR elsewhere then;
//  - the runtime stage's ENTRYPOINT + CMD is started with its ENV, on a free port instead of
//    50051 (the port may be taken here) and with a control token, since the image binds
//    0.0.0.0; the HEALTHCHECK command must then exit 0. It starts twice: as `docker run`
//    without options, and as README "Container" documents it: a script copied from examples/
//    into the /scripts mount, MODELSTUB_RECORD_DIR=/episodes, one call (over the HTTP front),
//    and the episode must be on disk after SIGTERM;
//  - USER: run as root (as CI is), the server and the HEALTHCHECK run as that user, the way
//    `runuser -u node` would (spawned with its uid and gid), so a file the image leaves
//    unwritable shows up here. When this machine has no such user, `nobody` stands in for it,
//    and a `chown USER:USER` in a RUN step is carried out for `nobody` instead. Not run as root,
//    everything runs as the current user (such a chown too) and permission faults cannot show
//    (it says so).
// EXPOSE cannot be carried out here; it is checked for presence.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

// The mount path README "Container" documents for scripts, and the example copied into it.
const scriptsMount = "/scripts";
const exampleScript = "hello.yaml";
const exampleReply = "Hello! How can I help?";

const repo = resolve(dirname(new URL(import.meta.url).pathname), "..");
const fail = (msg) => {
  console.error(`docker-check: ${msg}`);
  process.exit(1);
};

// Parse: one instruction per line, continuation lines joined, comments dropped.
const lines = readFileSync(join(repo, "Dockerfile"), "utf8").replace(/\\\n/g, " ").split("\n");
const stages = [];
for (const raw of lines) {
  const line = raw.trim();
  if (!line || line.startsWith("#")) continue;
  const [, op, rest] = /^(\w+)\s+(.*)$/.exec(line) ?? fail(`cannot parse: ${line}`);
  if (op.toUpperCase() === "FROM") {
    const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? fail(`bad FROM: ${rest}`);
    stages.push({ image: m[1], name: m[2] ?? String(stages.length), steps: [] });
  } else {
    if (!stages.length) fail(`${op} before FROM`);
    stages.at(-1).steps.push({ op: op.toUpperCase(), rest });
  }
}
const image = stages.at(-1).image;
if (!/^node:20\b/.test(image)) fail(`expected a node:20 base image (this machine runs Node 20), got ${image}`);
const imageUser = stages.at(-1).steps.findLast((s) => s.op === "USER")?.rest;
if (!imageUser || imageUser === "root" || imageUser === "0") fail("the runtime stage must switch to a non-root USER");

// Whom the server runs as (see the header). undefined: the current user.
const idOf = (user) => {
  try {
    const [uid, gid, group] = ["-u", "-g", "-gn"].map((f) => execFileSync("id", [f, user], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    return { name: user, uid: Number(uid), gid: Number(gid), group };
  } catch {
    return undefined;
  }
};
let runAs;
let standIn = false;
if (process.getuid?.() === 0) {
  runAs = idOf(imageUser);
  if (!runAs) {
    runAs = idOf("nobody") ?? fail(`this machine has neither the image's user ${imageUser} nor nobody to stand in for it`);
    standIn = true;
  }
  console.log(`docker-check: the server runs as ${runAs.name} (uid ${runAs.uid})${standIn ? `, standing in for the image's user ${imageUser}` : ""}`);
} else {
  console.log(`docker-check: not run as root: the server runs as the current user, so files the image's user ${imageUser} could not write go unnoticed`);
}
// Whom a `chown USER:USER` in a RUN step goes to, when it cannot go to the image's user itself.
const chownTo = standIn ? runAs : runAs ? undefined : idOf(execFileSync("id", ["-un"], { encoding: "utf8" }).trim());
const asUser = runAs ? { uid: runAs.uid, gid: runAs.gid } : {};

// Only what the stages install may be found: no NODE_PATH, no node_modules above the stages.
const baseEnv = { ...process.env };
delete baseEnv.NODE_PATH;

// The build context.
const ignore = readFileSync(join(repo, ".dockerignore"), "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
const toRegex = (p) => new RegExp(`^${p.replace(/^\/+/, "").replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*\*\//g, "(?:.*/)?").replace(/\*/g, "[^/]*")}(?:/.*)?$`);
const ignored = ignore.map(toRegex);
const tracked = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], { cwd: repo, encoding: "utf8" }).split("\n").filter(Boolean);
const work = mkdtempSync(join(tmpdir(), "modelstub-docker-check-"));
for (let dir = dirname(work); ; dir = dirname(dir)) {
  if (existsSync(join(dir, "node_modules"))) {
    rmSync(work, { recursive: true, force: true });
    fail(`${join(dir, "node_modules")} is above the temporary root ${work}: Node would resolve a production dependency the image does not install from there. Set TMPDIR to a folder with no node_modules above it`);
  }
  if (dir === dirname(dir)) break;
}
// mkdtemp makes it private to root; the server's user must reach the stages inside.
chmodSync(work, 0o755);
const context = join(work, "context");
for (const f of tracked) {
  if (ignored.some((r) => r.test(f))) continue;
  try {
    statSync(join(repo, f));
  } catch {
    continue; // deleted in the working tree
  }
  mkdirSync(dirname(join(context, f)), { recursive: true });
  cpSync(join(repo, f), join(context, f));
}

const parseJsonArray = (s) => {
  try {
    const v = JSON.parse(s);
    if (Array.isArray(v)) return v;
  } catch {}
  return undefined;
};

// RUN steps get an npm cache of their own (the image's `npm cache clean` must not empty this
// machine's), seeded with hard links to the machine's cache so nothing is downloaded twice.
const npmCache = join(work, "npm-cache");
const machineCache = join(process.env.HOME ?? "/root", ".npm", "_cacache");
try {
  statSync(machineCache);
  mkdirSync(npmCache, { recursive: true });
  execFileSync("cp", ["-al", machineCache, join(npmCache, "_cacache")]);
} catch {
  mkdirSync(npmCache, { recursive: true });
}

const roots = {};
let runtime;
for (const stage of stages) {
  const root = join(work, `stage-${stage.name}`);
  roots[stage.name] = root;
  let wd = "/";
  const env = { ...baseEnv, npm_config_cache: npmCache };
  const finalState = { env, wd, user: undefined, expose: [], healthcheck: undefined, entrypoint: [], cmd: [] };
  const at = (p) => join(root, p.startsWith("/") ? p : join(wd, p));
  console.log(`docker-check: stage ${stage.name} (${stage.image})`);
  for (const { op, rest } of stage.steps) {
    switch (op) {
      case "WORKDIR":
        wd = rest.startsWith("/") ? rest : join(wd, rest);
        mkdirSync(at(wd), { recursive: true });
        finalState.wd = wd;
        break;
      case "ENV":
        for (const m of rest.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[m[1]] = m[2].replace(/^"|"$/g, "");
        break;
      case "COPY": {
        const parts = rest.split(/\s+/);
        const from = parts[0].startsWith("--from=") ? parts.shift().slice(7) : undefined;
        const dest = parts.pop();
        for (const src of parts) {
          const source = from ? join(roots[from] ?? fail(`COPY --from=${from}: no such stage`), src) : join(context, src);
          try {
            statSync(source);
          } catch {
            fail(`COPY ${from ? `--from=${from} ` : ""}${src}: not found${from ? "" : " in the build context (check .dockerignore)"}`);
          }
          const target = dest.endsWith("/") ? join(at(dest), src.split("/").pop()) : at(dest);
          mkdirSync(dirname(target), { recursive: true });
          cpSync(source, target, { recursive: true });
        }
        break;
      }
      case "RUN": {
        // Absolute paths are inside the image; a chown to the image's user goes to its stand-in.
        let command = rest.replace(/(^|\s)\/(?=[\w.-])/g, `$1${root}/`);
        if (chownTo) command = command.replace(new RegExp(`(\\bchown\\s+(?:-\\S+\\s+)*)${imageUser}(?::${imageUser})?(?=\\s)`, "g"), `$1${chownTo.name}:${chownTo.group}`);
        console.log(`docker-check:   RUN ${rest}${command !== rest ? `\ndocker-check:     as ${command}` : ""}`);
        try {
          execFileSync("bash", ["-c", command], { cwd: at(wd), env, stdio: "inherit" });
        } catch {
          fail(`RUN failed in stage ${stage.name}: ${rest}`);
        }
        break;
      }
      case "USER":
        finalState.user = rest;
        break;
      case "EXPOSE":
        finalState.expose.push(...rest.split(/\s+/));
        break;
      case "HEALTHCHECK": {
        const m = /CMD\s+(\[.*\])\s*$/.exec(rest) ?? fail("HEALTHCHECK must use the exec form CMD [...]");
        finalState.healthcheck = parseJsonArray(m[1]);
        break;
      }
      case "ENTRYPOINT":
        finalState.entrypoint = parseJsonArray(rest) ?? fail("ENTRYPOINT must use the exec form");
        break;
      case "CMD":
        finalState.cmd = parseJsonArray(rest) ?? fail("CMD must use the exec form");
        break;
      default:
        fail(`docker-check does not know ${op}`);
    }
  }
  runtime = { root, ...finalState, at };
}

if (!runtime.expose.includes("50051")) fail("the runtime stage must EXPOSE 50051");
if (!runtime.healthcheck) fail("the runtime stage needs a HEALTHCHECK");
if (!/^0\.0\.0\.0:50051$/.test(runtime.env.MODELSTUB_GRPC ?? "")) fail("the runtime stage must set MODELSTUB_GRPC=0.0.0.0:50051");
// Nothing of the dev toolchain may be in the runtime image.
for (const dev of ["typescript", "vitest", "@bufbuild/buf"]) {
  try {
    statSync(runtime.at(join("node_modules", dev)));
    fail(`the runtime stage has the dev dependency ${dev}: install with --omit=dev`);
  } catch (e) {
    if (e?.code !== "ENOENT") throw e;
  }
}

const freePort = () =>
  new Promise((res) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });
/** An absolute path inside the image, on this machine. */
const inImage = (p) => join(runtime.root, p);

/**
 * Starts the image's ENTRYPOINT + CMD with its ENV and `extraEnv`, as its user; waits for the
 * HEALTHCHECK to pass, runs `whileUp`, sends SIGTERM and requires exit code 0.
 */
async function startContainer(what, extraEnv, whileUp = async () => {}) {
  const port = await freePort();
  const env = { ...runtime.env, ...extraEnv, MODELSTUB_GRPC: `0.0.0.0:${port}`, MODELSTUB_CONTROL_TOKEN: "docker-check" };
  delete env.NODE_PATH;
  const [cmd, ...args] = [...runtime.entrypoint, ...runtime.cmd];
  console.log(`docker-check: ${what}: starting ${[cmd, ...args].join(" ")} with MODELSTUB_GRPC=0.0.0.0:${port}`);
  const child = spawn(cmd, args, { cwd: runtime.at(runtime.wd), env, stdio: ["ignore", "inherit", "inherit"], ...asUser });
  const exited = new Promise((r) => child.on("exit", (c, sig) => r(c ?? sig)));
  const stop = () => child.kill("SIGTERM");
  process.on("exit", stop);
  const health = runtime.healthcheck.map((a) => a.replace("127.0.0.1:50051", `127.0.0.1:${port}`));
  let ok = false;
  let early;
  void exited.then((c) => (early = c));
  for (let i = 0; i < 50 && !ok && early === undefined; i++) {
    await new Promise((r) => setTimeout(r, 200));
    try {
      execFileSync(health[0], health.slice(1), { cwd: runtime.at(runtime.wd), env, stdio: "pipe", ...asUser });
      ok = true;
    } catch {}
  }
  let problem;
  if (!ok) problem = early === undefined ? "the started server never answered the HEALTHCHECK with SERVING" : `the server exited with ${early} before it was healthy`;
  else {
    try {
      await whileUp();
    } catch (err) {
      problem = err.message;
    }
  }
  stop();
  const code = await exited;
  process.off("exit", stop);
  if (problem) return problem;
  if (code !== 0) return `the server exited with ${code} on SIGTERM, not 0`;
  return undefined;
}

const problems = [];
const check = (what, problem) => {
  if (problem) problems.push(`${what}: ${problem}`);
};

// 1. `docker run` with no options: the built-in default script.
check("plain run", await startContainer("plain run", {}));

// 2. As README "Container" documents it: a script in the /scripts mount, episodes into /episodes.
const mounted = inImage(join(scriptsMount, exampleScript));
mkdirSync(dirname(mounted), { recursive: true });
cpSync(join(repo, "examples", exampleScript), mounted);
const recordDir = inImage("/episodes");
const httpPort = await freePort();
check(
  "documented run",
  await startContainer(
    "documented run",
    { MODELSTUB_SCRIPT: mounted, MODELSTUB_RECORD_DIR: recordDir, MODELSTUB_HTTP: `127.0.0.1:${httpPort}` },
    async () => {
      const res = await fetch(`http://127.0.0.1:${httpPort}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-modelstub-session": "docker-check" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
      });
      const body = await res.text();
      if (res.status !== 200 || JSON.parse(body).choices?.[0]?.message?.content !== exampleReply) {
        throw new Error(`the call to ${scriptsMount}/${exampleScript} answered ${res.status} ${body}, not ${JSON.stringify(exampleReply)}`);
      }
    },
  ),
);
const episode = join(recordDir, "docker-check.episode.binpb");
if (!problems.some((p) => p.startsWith("documented run"))) {
  try {
    if (statSync(episode).size === 0) check("documented run", `${episode} is empty`);
  } catch {
    check("documented run", `no episode at /episodes/docker-check.episode.binpb after SIGTERM: can the image's user write /episodes? (see the server's log above)`);
  }
}

rmSync(work, { recursive: true, force: true });
if (problems.length > 0) fail(problems.join("\n  "));
console.log(`docker-check: ok: built, installed for production, started as ${runAs?.name ?? "the current user"} twice (plain, and with a mounted script recording episodes), healthy, stopped cleanly`);
