#!/usr/bin/env node
// The container check (issue 14): builds the Dockerfile for real with podman and runs the image
// the way docs/container.md tells users to, then checks what a CI user relies on.
//
//   node .ci/container/check.mjs BASE_IMAGE     (run by .ci/run.d/30-container.sh)
//
// This file is longer than 250 lines because it is one script that runs its checks in order
// against one image and one container (each step uses what the one before built or started);
// kept whole, it reads top to bottom as the list of checks below, like the steps it runs.
//
// 1. Build: `podman build` of the Dockerfile with NODE_IMAGE=BASE_IMAGE (a local stand-in of the
//    same Node version, make-base.sh) and `--format docker` (the OCI format drops HEALTHCHECK).
//    A broken Dockerfile line fails here.
// 2. The image: Node version = the Dockerfile's, OCI labels (version = package.json's, licence,
//    source), both ports exposed, a non-root user, the HEALTHCHECK command, its size.
// 3. The documented run: the block of docs/container.md marked RUN_MARKER is run verbatim by
//    bash in a scratch folder, with `docker` a function that calls podman, swapping each
//    `-p 127.0.0.1:HOST:CONTAINER` for host networking (--network=host, the server bound to
//    127.0.0.1 on a free port by MODELSTUB_GRPC / MODELSTUB_HTTP) and the names for this check's:
//    publishing ports would make podman add a bridge and iptables rules on the host.
// 4. Waits for `podman healthcheck run` to report healthy; a Generate, a GenerateStream and an
//    HTTP chat completion from the host; GetEpisode.
// 5. `podman stop`: exit code 0 before the stop timeout (a graceful drain, not a SIGKILL), and the
//    episode files on the host mount whole and byte-equal to what GetEpisode returned.
// 6. Stop under load (issue 28): a second container on the image's defaults (MODELSTUB_GRACE
//    included) with 1,000 sessions, each with a call hanging in flight over 8 connections;
//    `podman stop -t 10`: exit code 0, not 137, the time it took and its margin under the 10 s,
//    every client's status UNAVAILABLE (the shutdown's), and on the host mount 1,000 whole pairs
//    of .binpb and .json that agree, each recording that status, and no leftover of a write.
// 7. Cleans up by name (containers, image; the cached base stays) and checks the host's links,
//    iptables rules and ip_forward are as they were.
// Ends with "N passed, N failed". CONTAINER_CONTEXT=DIR builds another tree (to try a broken copy).
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { create, fromBinary, fromJsonString, toBinary } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata } from "@grpc/grpc-js";
import { parse as parseYaml } from "yaml";

const repo = resolve(dirname(new URL(import.meta.url).pathname), "../..");
const context = resolve(process.env.CONTAINER_CONTEXT ?? repo);
const { openGrpcPort } = await import(join(repo, "dist/src/port/grpc-port.js"));
const { createControlClient } = await import(join(repo, "dist/src/port/control-client.js"));
const { GenerateRequestSchema, MessageSchema, ModelService, Role } = await import(join(repo, "dist/gen/modelstub/v1/model_pb.js"));
const { EpisodeSchema } = await import(join(repo, "dist/gen/modelstub/v1/episode_pb.js"));
const { serviceDefinition } = await import(join(repo, "dist/src/grpc/service-definition.js"));

const base = process.argv[2] ?? fail0("usage: check.mjs BASE_IMAGE");
const IMAGE = "localhost/modelstub-ci-check:latest";
const NAME = "modelstub-ci-check";
const LOAD_NAME = "modelstub-ci-check-load";
// The docs block this check runs; docs/container.md puts this exact comment before it.
const RUN_MARKER = "<!-- not run: the container step (.ci/run.d/30-container.sh) runs this same command -->";
const TOKEN_HEADER = (t) => ({ authorization: `Bearer ${t}` });

function fail0(msg) {
  console.error(`container-check: ${msg}`);
  process.exit(1);
}
let passed = 0;
let failed = 0;
const check = (ok, what, detail = "") => {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${ok || !detail ? "" : `: ${detail}`}`);
  return ok;
};
const podman = (args, opts = {}) => spawnSync("podman", args, { encoding: "utf8", maxBuffer: 64 << 20, ...opts });
const seconds = (t0) => ((performance.now() - t0) / 1000).toFixed(1);
const freePort = () =>
  new Promise((res, rej) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on("error", rej);
  });
const netState = () =>
  ["ip -br link", "iptables -S", "iptables -t nat -S", "cat /proc/sys/net/ipv4/ip_forward"]
    .map((c) => `${c}:\n${spawnSync("bash", ["-c", c], { encoding: "utf8" }).stdout}`)
    .join("\n");
const cleanup = () => {
  podman(["rm", "-f", "-t", "0", NAME]);
  podman(["rm", "-f", "-t", "0", LOAD_NAME]);
  podman(["rmi", "-f", IMAGE]);
};
const finish = () => {
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
};

const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
const dockerfile = readFileSync(join(context, "Dockerfile"), "utf8");
const nodeVersion = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(dockerfile)?.[1];
check(!!nodeVersion && Number(nodeVersion.split(".")[0]) >= 24, "the Dockerfile's NODE_IMAGE is an exact Node 24+ release", nodeVersion);

let scratch; // the documented run's folder, removed at the end
const net0 = netState();
cleanup(); // what a killed earlier run may have left, by name

// 1. Build.
let t0 = performance.now();
const build = podman(
  [
    "build",
    "--format",
    "docker",
    "--pull=never",
    "--network=host",
    "--layers=false",
    "--build-arg",
    `NODE_IMAGE=${base}`,
    "-t",
    IMAGE,
    "-f",
    join(context, "Dockerfile"),
    context,
  ],
  { stdio: ["ignore", "pipe", "pipe"] },
);
const buildSeconds = seconds(t0);
if (
  !check(
    build.status === 0,
    `podman build of the Dockerfile (${buildSeconds} s)`,
    `exit ${build.status}\n${(build.stdout + build.stderr).split("\n").slice(-25).join("\n")}`,
  )
) {
  cleanup();
  finish();
}

try {
  await run();
} catch (err) {
  check(false, "the check ran to its end", err?.stack ?? String(err));
} finally {
  cleanup();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
check(podman(["container", "exists", NAME]).status !== 0, `container ${NAME} removed`);
check(podman(["container", "exists", LOAD_NAME]).status !== 0, `container ${LOAD_NAME} removed`);
check(podman(["image", "exists", IMAGE]).status !== 0, `image ${IMAGE} removed`);
const net1 = netState();
check(net1 === net0, "the host's links, iptables rules and ip_forward are unchanged", `before:\n${net0}\nafter:\n${net1}`);
finish();

async function run() {
  // 2. The image.
  const [info] = JSON.parse(podman(["image", "inspect", IMAGE]).stdout);
  const cfg = info.Config ?? {};
  const labels = cfg.Labels ?? {};
  const mb = (info.Size / 1e6).toFixed(0);
  console.log(`image ${IMAGE}: ${mb} MB (${info.Size} bytes) on ${base}, built in ${buildSeconds} s`);
  check(
    labels["org.opencontainers.image.version"] === pkg.version,
    "label org.opencontainers.image.version is package.json's version",
    `${labels["org.opencontainers.image.version"]} != ${pkg.version}`,
  );
  check(
    labels["org.opencontainers.image.licenses"] === pkg.license,
    "label org.opencontainers.image.licenses is package.json's licence",
    labels["org.opencontainers.image.licenses"],
  );
  check(!!labels["org.opencontainers.image.source"], "label org.opencontainers.image.source is set");
  check(
    "50051/tcp" in (cfg.ExposedPorts ?? {}) && "8080/tcp" in (cfg.ExposedPorts ?? {}),
    "ports 50051 and 8080 are exposed",
    JSON.stringify(cfg.ExposedPorts),
  );
  const health = (info.Healthcheck ?? info.HealthCheck ?? cfg.Healthcheck)?.Test ?? [];
  check(JSON.stringify(health) === JSON.stringify(["CMD", "node", "bin/modelstub.js", "health"]), "HEALTHCHECK runs modelstub health", JSON.stringify(health));
  // The runtime has no shell (Node and its libraries only): probe it with node itself.
  const inImage = (js) => podman(["run", "--rm", "--network=host", "--entrypoint", "node", IMAGE, "-e", js]).stdout.trim();
  const version = inImage("console.log(process.version)");
  check(version === `v${nodeVersion}`, `the image runs Node ${nodeVersion}, the Dockerfile's`, version);
  const who = inImage("console.log(process.getuid(), require('os').userInfo().username)");
  check(who === "1000 node", "the image runs as the non-root user node (uid 1000)", who);
  const extra = inImage(
    "const fs = require('fs'); console.log(['/bin/sh', '/usr/bin/apt-get', '/usr/local/bin/npm', '/usr/local/lib/node_modules'].filter((p) => fs.existsSync(p)).join(' ') || 'none')",
  );
  check(extra === "none", "the runtime carries no shell, package manager or npm (Node and its libraries only)", extra);

  // 3. The documented run, in a scratch folder (a clone's examples/ beside it).
  const runBlock = docsBlock();
  scratch = mkdtempSync(join(tmpdir(), "modelstub-container-"));
  cpSync(join(repo, "examples"), join(scratch, "examples"), { recursive: true });
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  const shim = `
docker() {
  [ "$1" = run ] || { echo "container-check: the documented block may only 'docker run'" >&2; return 2; }
  shift
  local args=(run --network=host) envs=() p
  while [ $# -gt 0 ]; do
    case "$1" in
      -p|--publish) p="$2"; shift 2
        case "$p" in
          127.0.0.1:*:50051) envs+=(-e "MODELSTUB_GRPC=127.0.0.1:${grpcPort}") ;;
          127.0.0.1:*:8080) envs+=(-e "MODELSTUB_HTTP=127.0.0.1:${httpPort}") ;;
          *) echo "container-check: -p $p is not bound to 127.0.0.1 or not to 50051/8080" >&2; return 2 ;;
        esac ;;
      --name) args+=(--name "${NAME}"); shift 2 ;;
      modelstub) args+=("\${envs[@]}" "${IMAGE}"); shift ;;
      *) args+=("$1"); shift ;;
    esac
  done
  podman "\${args[@]}"
}
set -e
`;
  t0 = performance.now();
  const started = spawnSync("bash", ["-c", shim + runBlock], { cwd: scratch, encoding: "utf8" });
  if (!check(started.status === 0, `the documented docker run, as podman (${seconds(t0)} s)`, `exit ${started.status}: ${started.stderr}`)) return;
  const env = Object.fromEntries((/MODELSTUB_CONTROL_TOKEN=(\S+)/.exec(runBlock) ?? []).slice(1).map((t) => ["token", t]));
  check(!!env.token, "the documented run sets MODELSTUB_CONTROL_TOKEN");

  // 4. Healthy, then calls from the host.
  t0 = performance.now();
  let healthy = false;
  for (let i = 0; i < 60 && !healthy; i++) {
    healthy = podman(["healthcheck", "run", NAME]).status === 0;
    if (!healthy) await new Promise((r) => setTimeout(r, 500));
  }
  if (!check(healthy, `podman healthcheck run reports healthy (${seconds(t0)} s)`, podman(["logs", NAME]).stderr)) return;

  const addr = `127.0.0.1:${grpcPort}`;
  const model = openGrpcPort(addr);
  const control = createControlClient(addr, { token: env.token });
  const user = (content) => create(GenerateRequestSchema, { model: "modelstub", messages: [create(MessageSchema, { role: Role.USER, content })] });
  const one = await model.generate(user("one whole reply"), { timeoutMs: 10_000 });
  check(one.message?.content === "All in one piece.", "Generate answers from the mounted examples script", one.message?.content);
  const chunks = [];
  for await (const f of model.generateStream(user("explicit chunks"), { timeoutMs: 10_000 })) if (f.frame.case === "textDelta") chunks.push(f.frame.value);
  check(
    JSON.stringify(chunks) === JSON.stringify(["Hello", ", ", "streaming ", "world!"]),
    "GenerateStream streams the script's chunks",
    JSON.stringify(chunks),
  );
  const res = await fetch(`http://127.0.0.1:${httpPort}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...TOKEN_HEADER(env.token) },
    body: JSON.stringify({ model: "modelstub", messages: [{ role: "user", content: "hi" }] }),
  });
  const body = await res.json().catch(() => ({}));
  check(
    res.status === 200 && body.choices?.[0]?.message?.content === "Split into words by default.",
    "the HTTP front answers a chat completion",
    `${res.status} ${JSON.stringify(body)}`,
  );
  const got = await control.call("GetEpisode", { session: "default" });
  check(got.episode?.calls?.length === 3, "GetEpisode holds the three calls", String(got.episode?.calls?.length));
  model.close();
  control.close();

  // 5. Graceful stop.
  t0 = performance.now();
  const stop = podman(["stop", "-t", "10", NAME]);
  const stopSeconds = Number(seconds(t0));
  const [state] = JSON.parse(podman(["inspect", NAME]).stdout).map((c) => c.State);
  check(
    stop.status === 0 && state.ExitCode === 0 && stopSeconds < 10,
    `podman stop: exit code 0 after ${stopSeconds} s, before the 10 s SIGKILL`,
    `stop exit ${stop.status}, container exit ${state.ExitCode}, ${stopSeconds} s${state.ExitCode === 137 ? ' (SIGKILL: if the logs end in "stopped", node finished the drain but did not exit: a connection left open keeps its event loop alive; seen here on the gRPC port, half-closed by the server, while this check still held its closed grpc-js channel)' : ""}\n${podman(["logs", NAME]).stderr}`,
  );
  const logs = ((l) => l.stdout + l.stderr)(podman(["logs", NAME]));
  check(
    /"msg":"shutting down".*"signal":"SIGTERM"/.test(logs) && /"msg":"stopped"/.test(logs),
    'the logs show SIGTERM reached node (PID 1) and the drain ended in "stopped"',
    logs.split("\n").slice(-5).join("\n"),
  );
  const dir = join(scratch, "episodes");
  const files = existsSync(dir) ? readdirSync(dir).sort() : [];
  const store = existsSync(join(dir, ".episodes")) ? readdirSync(join(dir, ".episodes")).sort() : [];
  const current = store.includes("default") ? readlinkSync(join(dir, ".episodes", "default")) : "";
  check(
    JSON.stringify(files) === JSON.stringify([".episodes", "default.episode.binpb", "default.episode.json"]) &&
      JSON.stringify(store) === JSON.stringify(["default", current].sort()),
    "the episodes mount holds default.episode.binpb and .json (links to .episodes/default/, the pair's one folder), no temp files",
    `${files.join(", ")} | .episodes: ${store.join(", ")}`,
  );
  if (files.includes("default.episode.binpb")) {
    const onDisk = readFileSync(join(dir, "default.episode.binpb"));
    check(
      Buffer.compare(onDisk, Buffer.from(got.episodeBinpb)) === 0,
      "episodes/default.episode.binpb is byte-equal to GetEpisode's bytes before the stop",
      `${onDisk.length} vs ${got.episodeBinpb.length} bytes`,
    );
    check(statSync(join(dir, "default.episode.binpb")).uid === 1000, "the episode file is written by uid 1000 (node)");
  }
  if (files.includes("default.episode.json")) {
    let json;
    try {
      json = JSON.parse(readFileSync(join(dir, "default.episode.json"), "utf8"));
    } catch (err) {
      json = { error: String(err) };
    }
    check(
      Array.isArray(json.calls) && json.calls.length === 3,
      "episodes/default.episode.json is whole: it parses and holds the three calls",
      JSON.stringify(json).slice(0, 300),
    );
  }
  checkCompose();
  await stopUnderLoad();
}

// 6. Stop under load, on the image's defaults: 1,000 sessions, each with one call in flight.
async function stopUnderLoad() {
  const sessions = 1000;
  const channels = 8;
  const load = join(scratch, "load");
  mkdirSync(join(load, "scripts"), { recursive: true });
  mkdirSync(join(load, "episodes"));
  chmodSync(join(load, "episodes"), 0o777);
  writeFileSync(join(load, "scripts", "hang.yaml"), "entries:\n  - hang: true\n    repeat: true\n");
  const port = await freePort();
  const started = podman([
    "run",
    "-d",
    "--name",
    LOAD_NAME,
    "--network=host",
    "-v",
    `${load}/scripts:/scripts:ro`,
    "-v",
    `${load}/episodes:/episodes`,
    "-e",
    "MODELSTUB_SCRIPT=/scripts/hang.yaml",
    "-e",
    `MODELSTUB_GRPC=127.0.0.1:${port}`,
    "-e",
    "MODELSTUB_HTTP=",
    "-e",
    "MODELSTUB_LOG_LEVEL=info",
    IMAGE,
  ]);
  if (!check(started.status === 0, "stop under load: the image starts on its defaults with a hanging script", started.stderr)) return;
  let healthy = false;
  for (let i = 0; i < 60 && !healthy; i++) {
    healthy = podman(["healthcheck", "run", LOAD_NAME]).status === 0;
    if (!healthy) await new Promise((r) => setTimeout(r, 500));
  }
  if (!check(healthy, "stop under load: healthy", podman(["logs", LOAD_NAME]).stderr)) return;
  const Client = makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService");
  const clients = Array.from(
    { length: channels },
    () => new Client(`127.0.0.1:${port}`, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }),
  );
  const request = create(GenerateRequestSchema, { model: "modelstub", messages: [create(MessageSchema, { role: Role.USER, content: "hang" })] });
  const ended = [];
  for (let i = 0; i < sessions; i++) {
    const md = new Metadata();
    md.set("x-modelstub-session", `s${i}`);
    ended.push(new Promise((resolve) => clients[i % channels].Generate(request, md, (err) => resolve(err ? `${err.code} ${err.details}` : "OK"))));
  }
  const control = createControlClient(`127.0.0.1:${port}`);
  let running = 0;
  for (let i = 0; i < 240 && running < sessions; i++) {
    running = (await control.call("ListSessions", {})).sessions.reduce((n, s) => n + s.running, 0);
    if (running < sessions) await new Promise((r) => setTimeout(r, 250));
  }
  control.close();
  if (!check(running === sessions, `stop under load: ${sessions} calls in flight over ${channels} connections`, `${running} running`)) return;
  const graceEnv = (JSON.parse(podman(["image", "inspect", IMAGE]).stdout)[0].Config.Env ?? []).find((e) => e.startsWith("MODELSTUB_GRACE="));
  const t0 = performance.now();
  const stop = podman(["stop", "-t", "10", LOAD_NAME]);
  const stopSeconds = Number(seconds(t0));
  const [state] = JSON.parse(podman(["inspect", LOAD_NAME]).stdout).map((c) => c.State);
  const logs = ((l) => l.stdout + l.stderr)(podman(["logs", LOAD_NAME]));
  const stopped = /\{[^\n]*"msg":"stopped"[^\n]*\}/.exec(logs)?.[0] ?? "(no stopped line)";
  console.log(
    `stop under load: podman stop took ${stopSeconds} s with ${graceEnv}: ${(10 - stopSeconds).toFixed(1)} s before the SIGKILL; the server's last line: ${stopped}`,
  );
  check(
    stop.status === 0 && state.ExitCode === 0,
    `stop under load: exit code 0 after ${stopSeconds} s, not SIGKILLed (137)`,
    `stop exit ${stop.status}, container exit ${state.ExitCode}\n${logs.split("\n").slice(-8).join("\n")}`,
  );
  // The margin: the drain takes the grace, and cutting off and writing 1,000 episodes at most half
  // of what docker leaves after it. A machine slower than that needs a shorter grace (docs/container.md).
  const graceSeconds = parseFloat(graceEnv?.split("=")[1] ?? "5");
  check(
    stopSeconds < graceSeconds + (10 - graceSeconds) / 2,
    `stop under load: the stop ends within the grace and half the rest of docker's 10 s (${graceSeconds} + ${((10 - graceSeconds) / 2).toFixed(1)} s)`,
    `${stopSeconds} s`,
  );
  const statuses = {};
  for (const s of await Promise.all(ended)) statuses[s] = (statuses[s] ?? 0) + 1;
  for (const c of clients) c.close();
  const shutdown = "14 modelstub shut down while this call was running: its grace period was over";
  check(statuses[shutdown] === sessions, `stop under load: every client sees UNAVAILABLE, the shutdown's status`, JSON.stringify(statuses));
  const dir = join(load, "episodes");
  let agree = 0;
  const problems = [];
  for (let i = 0; i < sessions; i++) {
    try {
      const binpb = readFileSync(join(dir, `s${i}.episode.binpb`));
      const json = readFileSync(join(dir, `s${i}.episode.json`), "utf8");
      const episode = fromBinary(EpisodeSchema, binpb);
      const same = Buffer.from(toBinary(EpisodeSchema, fromJsonString(EpisodeSchema, json))).equals(binpb);
      const cut = episode.calls.length === 1 && episode.calls[0].status?.code === 14;
      if (same && cut) agree++;
      else problems.push(`s${i}: ${same ? "" : "the pair disagrees; "}${cut ? "" : `calls ${JSON.stringify(episode.calls.map((c) => c.status))}`}`);
    } catch (err) {
      problems.push(`s${i}: ${err.message}`);
    }
  }
  check(
    agree === sessions,
    `stop under load: ${sessions} pairs of .binpb and .json on the host, each agreeing and recording the shutdown's UNAVAILABLE`,
    `${agree} good; ${problems.slice(0, 5).join("; ")}`,
  );
  const top = readdirSync(dir).filter((f) => !/^s\d+\.episode\.(binpb|json)$/.test(f));
  const store = existsSync(join(dir, ".episodes")) ? readdirSync(join(dir, ".episodes")) : [];
  const named = new Set(store.filter((f) => !f.includes("@")).map((f) => readlinkSync(join(dir, ".episodes", f))));
  const leftovers = store.filter((f) => f.includes("@") && !named.has(f));
  check(
    JSON.stringify(top) === JSON.stringify([".episodes"]) && leftovers.length === 0,
    "stop under load: no temp file or unused folder left on the host mount",
    `${top.join(", ")} | ${leftovers.slice(0, 5).join(", ")}`,
  );
}

// The block after RUN_MARKER in docs/container.md: the one the docs give for `docker run`.
function docsBlock() {
  const md = readFileSync(join(repo, "docs/container.md"), "utf8");
  const at = md.indexOf(`${RUN_MARKER}\n\`\`\`sh\n`);
  if (at < 0) throw new Error(`docs/container.md has no sh block after ${RUN_MARKER}`);
  const start = md.indexOf("\n", md.indexOf("```sh", at)) + 1;
  const block = md.slice(start, md.indexOf("\n```", start));
  check(/^docker run .*modelstub$/m.test(block.replace(/\\\n\s*/g, "")), "docs/container.md's run block is a docker run of the image `modelstub`", block);
  return block;
}

// The compose example is not run (no compose here); check what it promises against the image.
function checkCompose() {
  const file = join(repo, "docs/container/compose.yaml");
  const doc = parseYaml(readFileSync(file, "utf8"));
  const svc = doc.services?.modelstub ?? {};
  check(
    JSON.stringify(svc.healthcheck?.test) === JSON.stringify(["CMD", "node", "bin/modelstub.js", "health"]),
    "compose.yaml: modelstub's healthcheck is the image's",
    JSON.stringify(svc.healthcheck?.test),
  );
  check(
    (svc.ports ?? []).every((p) => String(p).startsWith("127.0.0.1:")),
    "compose.yaml: published ports are bound to 127.0.0.1",
    JSON.stringify(svc.ports),
  );
  const waits = Object.values(doc.services ?? {}).some((s) => s?.depends_on?.modelstub?.condition === "service_healthy");
  check(waits, "compose.yaml: a client service waits for modelstub to be healthy");
  const md = readFileSync(join(repo, "docs/container.md"), "utf8");
  const at = md.indexOf("<!-- snippet: docs/container/compose.yaml -->\n```yaml\n");
  const shown = at < 0 ? "" : md.slice(md.indexOf("\n", md.indexOf("```yaml", at)) + 1, md.indexOf("\n```", md.indexOf("```yaml", at)) + 1);
  check(shown === readFileSync(file, "utf8"), "docs/container.md shows docs/container/compose.yaml as it is");
}
