#!/usr/bin/env node
// Carries out the Dockerfile without a Docker engine, so a broken step fails CI:
//  - the build context is the tracked files minus .dockerignore;
//  - each stage gets a fresh temporary root; WORKDIR, COPY (from the context or --from a
//    stage), ENV and RUN run there with the same commands, the production install included;
//  - the runtime stage's ENTRYPOINT + CMD is started with its ENV, on a free port instead of
//    50051 (the only change: the port may be taken here) and with a control token, since the
//    image binds 0.0.0.0; then the HEALTHCHECK command must exit 0.
// USER and EXPOSE cannot be carried out here; they are checked for presence (non-root user).
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

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

// The build context.
const ignore = readFileSync(join(repo, ".dockerignore"), "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
const toRegex = (p) => new RegExp(`^${p.replace(/^\/+/, "").replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*\*\//g, "(?:.*/)?").replace(/\*/g, "[^/]*")}(?:/.*)?$`);
const ignored = ignore.map(toRegex);
const tracked = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], { cwd: repo, encoding: "utf8" }).split("\n").filter(Boolean);
const work = mkdtempSync(join(tmpdir(), "modelstub-docker-check-"));
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
  const env = { ...process.env, npm_config_cache: npmCache };
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
      case "RUN":
        console.log(`docker-check:   RUN ${rest}`);
        try {
          execFileSync("bash", ["-c", rest], { cwd: at(wd), env, stdio: "inherit" });
        } catch {
          fail(`RUN failed in stage ${stage.name}: ${rest}`);
        }
        break;
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

if (!runtime.user || runtime.user === "root" || runtime.user === "0") fail("the runtime stage must switch to a non-root USER");
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
const port = await freePort();
const env = { ...runtime.env, MODELSTUB_GRPC: `0.0.0.0:${port}`, MODELSTUB_CONTROL_TOKEN: "docker-check" };
const [cmd, ...args] = [...runtime.entrypoint, ...runtime.cmd];
console.log(`docker-check: starting ${[cmd, ...args].join(" ")} with MODELSTUB_GRPC=0.0.0.0:${port}`);
const child = spawn(cmd, args, { cwd: runtime.at(runtime.wd), env, stdio: ["ignore", "inherit", "inherit"] });
const stop = () => child.kill("SIGTERM");
process.on("exit", stop);
const health = runtime.healthcheck.map((a) => a.replace("127.0.0.1:50051", `127.0.0.1:${port}`));
let ok = false;
for (let i = 0; i < 50 && !ok; i++) {
  await new Promise((r) => setTimeout(r, 200));
  try {
    execFileSync(health[0], health.slice(1), { cwd: runtime.at(runtime.wd), env, stdio: "pipe" });
    ok = true;
  } catch {}
}
stop();
const code = await new Promise((r) => child.on("exit", (c) => r(c)));
rmSync(work, { recursive: true, force: true });
if (!ok) fail("the started server never answered the HEALTHCHECK with SERVING");
if (code !== 0) fail(`the server exited with ${code} on SIGTERM, not 0`);
console.log("docker-check: ok: built, installed for production, started, healthy, stopped cleanly");
