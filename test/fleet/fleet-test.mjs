#!/usr/bin/env node
// The fleet test (issue 18): three modelstub instances behind HAProxy (deploy/haproxy/haproxy.cfg,
// unchanged), gRPC over h2c on both sides, sessions placed by consistent hashing on
// x-modelstub-session. Several client processes drive 60 sessions at once through the balancer;
// a fourth instance, alone, is driven the same way as the reference. Then one instance is
// stopped. Prints one line per check and ends with "N passed, N failed"; exits 1 on a failure.
// Waits on events (stderr lines, HAProxy's runtime API, process exits), never on the clock.
// It is longer than 250 lines because it is one scenario read top to bottom: each phase starts
// from where the one before left the fleet's sessions.
//
// Behind nginx (--proxy nginx, deploy/nginx/nginx.conf) the same, less what needs HAProxy's active
// health checks (its check bytes, the stats, a flapping check, a restart).
//
// Issue 28: every answer names its instance and episode (x-modelstub-instance,
// x-modelstub-episode), and every session whose calls moved (SIGTERM, SIGKILL, a restart, a
// flapping health check) sees a new episode, and no other session does; the statuses of calls in
// flight when an instance is killed are printed per proxy; with --busy N, N busy loops run from
// the start to the first stop, and HAProxy must not mark a healthy instance DOWN meanwhile.
//
//   node test/fleet/fleet-test.mjs [--proxy haproxy|nginx] [--busy N] [--keep DIR]
//   (needs dist/, and haproxy or nginx on PATH)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { checkRequest, servingReply } from "./h2-health-check.mjs";
import { modelPb } from "./fleet-lib.mjs";
import { admin, connect, freePorts, HAPROXY_CFG, REPO, serverStats, startHaproxy, startModelstub, waitFor, waitForServers } from "./fleet-lib.mjs";
import { startNginx } from "./start-nginx.mjs";

const { values: o } = parseArgs({
  options: { keep: { type: "string" }, proxy: { type: "string", default: "haproxy" }, busy: { type: "string", default: "0" } },
});
const HAPROXY = o.proxy === "haproxy";
if (!HAPROXY && o.proxy !== "nginx") throw new Error(`--proxy ${o.proxy}: haproxy or nginx`);
const SESSIONS = Array.from({ length: 60 }, (_, i) => `fleet-${String(i).padStart(2, "0")}`);
const WORKERS = 3;
const work = o.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), "modelstub-fleet-"));
fs.mkdirSync(work, { recursive: true });
const SHARED = path.join(work, "episodes"); // stands for a volume every instance mounts
const serverScript = path.join(REPO, "test/fleet/server-script.yaml");

let passed = 0;
let failed = 0;
function check(name, ok, detail = "") {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
}
const eq = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

const started = [];
let busy = [];
function stopBusy() {
  for (const b of busy) b.kill("SIGKILL");
  busy = [];
}
async function cleanup() {
  stopBusy();
  await Promise.allSettled(started.map((p) => p.stop()));
}
process.on("SIGINT", () => cleanup().then(() => process.exit(130)));
process.on("SIGTERM", () => cleanup().then(() => process.exit(143)));

/** Runs client processes, each driving its share of `sessions`; merges their JSON answers. */
function drive(grpcAddr, httpUrl, sessions, phase, processes = WORKERS) {
  return driveWith(grpcAddr, httpUrl, sessions, phase, processes);
}

/**
 * Who answered each session's last call, and in which episode, after `results` (a drive's):
 * kept per session across phases, so a phase can be compared with the one before.
 */
const last = {};
function remember(results) {
  for (const [s, r] of Object.entries(results)) last[s] = { instance: r.instances.at(-1), episode: r.episodes.at(-1) };
}

/**
 * Compares one more call per session with the call before it: the sessions whose instance
 * changed (they moved) must be exactly those whose episode changed (the client can tell), and
 * every answer must name both. Returns the sessions that moved.
 */
function movesSeen(what, results, expectMoved) {
  const before = { ...last };
  const moved = Object.keys(results).filter((s) => results[s].instances[0] !== before[s].instance);
  const changed = Object.keys(results).filter((s) => results[s].episodes[0] !== before[s].episode);
  const unnamed = Object.keys(results).filter((s) => !results[s].instances[0] || !results[s].episodes[0]?.startsWith(`${results[s].instances[0]}/${s}/`));
  const restarted = expectMoved.filter((s) => !changed.includes(s));
  check(
    `${what}: every session whose calls moved sees a new x-modelstub-episode, and no other session does`,
    unnamed.length === 0 &&
      restarted.length === 0 &&
      changed.every((s) => moved.includes(s) || expectMoved.includes(s)) &&
      moved.every((s) => changed.includes(s)),
    `${moved.length} moved, ${changed.length} saw a new episode${unnamed.length ? `; unnamed: ${unnamed.join(",")}` : ""}${restarted.length ? `; not seen: ${restarted.join(",")}` : ""}`,
  );
  remember(results);
  return moved;
}

async function driveWith(grpcAddr, httpUrl, sessions, phase, processes) {
  const shares = Array.from({ length: processes }, (_, w) => sessions.filter((_, i) => i % processes === w)).filter((s) => s.length);
  const outs = await Promise.all(
    shares.map(
      (share) =>
        new Promise((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [path.join(REPO, "test/fleet/fleet-worker.mjs"), "--grpc", grpcAddr, "--http", httpUrl, "--sessions", share.join(","), "--phase", phase],
            { stdio: ["ignore", "pipe", "inherit"] },
          );
          let out = "";
          child.stdout.on("data", (d) => (out += d));
          child.on("exit", (code) => {
            const parsed = out.trim() ? JSON.parse(out.trim().split("\n").pop()) : { error: `no output (exit ${code})` };
            parsed.error ? reject(new Error(`client process (${share[0]}...): ${parsed.error}`)) : resolve(parsed);
          });
        }),
    ),
  );
  return Object.assign({}, ...outs);
}

async function episodes(client, sessions) {
  const out = {};
  for (const s of sessions) {
    const r = await client.control("GetEpisode", s, { bytesOnly: true });
    out[s] = { bytes: r.response.episodeBinpb, instance: r.instance };
  }
  return out;
}

try {
  // ---- the fleet, the reference and the balancer
  const [bind, refGrpc, refHttp, httpBind, ...ports] = await freePorts(10);
  // Each process joins `started` as soon as it runs, so a failed start still stops the others.
  const start = (opts) => startModelstub(opts).then((m) => (started.push(m), m));
  const [ms1, ms2, ms3, ref] = await Promise.all([
    ...[0, 1, 2].map((i) =>
      start({ name: `ms${i + 1}`, grpcPort: ports[2 * i], httpPort: ports[2 * i + 1], recordDir: path.join(SHARED, `ms${i + 1}`), script: serverScript }),
    ),
    start({ name: "reference", grpcPort: refGrpc, httpPort: refHttp, script: serverScript }),
  ]);
  const fleet = [ms1, ms2, ms3];
  const adminSocket = path.join(work, "haproxy.sock");
  const balancer = `127.0.0.1:${bind}`;
  // HAProxy takes gRPC and HTTP/1.1 on one port; nginx 1.22 needs a port for each.
  const balancerHttp = HAPROXY ? `http://${balancer}` : `http://127.0.0.1:${httpBind}`;
  const lb = HAPROXY
    ? await startHaproxy({ bind: balancer, adminSocket, instances: fleet })
    : await startNginx({ grpcBind: balancer, httpBind: balancerHttp.slice(7), prefix: path.join(work, "nginx"), instances: fleet });
  started.push(lb);
  console.log(
    `fleet: ${fleet.map((m) => `${m.name} ${m.grpc}`).join(", ")}; ${o.proxy} on ${balancer}${HAPROXY ? "" : ` and ${balancerHttp}`}; reference ${ref.grpc}; work dir ${work}`,
  );
  const busyLoops = Number(o.busy);
  if (busyLoops > 0) {
    busy = Array.from({ length: busyLoops }, () => spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" }));
    console.log(`fleet: ${busyLoops} busy loops run until the first stop`);
  }

  // ---- health: HAProxy's own gRPC health check, and health through the balancer
  if (HAPROXY) {
    const cfg = fs.readFileSync(HAPROXY_CFG, "utf8");
    check(
      "the config's tcp-check bytes are the HTTP/2 Health/Check exchange test/fleet/h2-health-check.mjs builds",
      cfg.includes(`tcp-check send-binary ${checkRequest.toString("hex")}\n`) && cfg.includes(`tcp-check expect binary ${servingReply.toString("hex")}\n`),
    );
    await waitForServers(adminSocket, ["ms1", "ms2", "ms3"], "UP");
    check("HAProxy's active gRPC health check passes on all three instances (L7OK)", true);
  } else {
    check("nginx -t accepts deploy/nginx/nginx.conf, rendered, and nginx serves it", true);
  }
  const lbClient = connect(balancer);
  const healthRuns = await Promise.all([0, 1, 2, 3, 4, 5].map(() => lbClient.healthCheck("")));
  check(
    "grpc.health.v1 Check through the balancer answers SERVING",
    healthRuns.every((r) => r.response.status === 1),
    `answered by ${[...new Set(healthRuns.map((r) => r.instance))].sort().join(",")}`,
  );
  // --timeout: the probe's default second is grpc_health_probe's, for an orchestrator's quick
  // poll; here 18 busy loops share 2 cores, and a CLI process takes seconds to start and connect.
  const healthCli = await new Promise((resolve) => {
    const c = spawn(process.execPath, ["bin/modelstub.js", "health", "--addr", balancer, "--service", "modelstub.v1.ControlService", "--timeout", "30s"], {
      cwd: REPO,
      stdio: "ignore",
    });
    c.on("exit", resolve);
  });
  check("`modelstub health --addr <balancer>` exits 0", healthCli === 0, `exit ${healthCli}`);

  // ---- 60 sessions from 3 client processes through the balancer; the same against one instance
  const [viaFleet, viaRef] = await Promise.all([drive(balancer, balancerHttp, SESSIONS, "load"), drive(ref.grpc, ref.http, SESSIONS, "load")]);
  check(
    "every session's calls were answered through the balancer",
    SESSIONS.every((s) => viaFleet[s]?.instances.length === 7),
  );
  const owner = Object.fromEntries(SESSIONS.map((s) => [s, viaFleet[s].instances[0]]));
  const split = SESSIONS.filter((s) => new Set(viaFleet[s].instances).size !== 1 || !owner[s]);
  check(
    "each session's calls (LoadScript, 5 model calls over gRPC and HTTP, VerifySession) all reached one instance",
    split.length === 0,
    split.map((s) => `${s}: ${viaFleet[s].instances.join(",")}`).join("; "),
  );
  const counts = Object.fromEntries(fleet.map((m) => [m.name, SESSIONS.filter((s) => owner[s] === m.name).length]));
  console.log(`fleet: sessions per instance: ${JSON.stringify(counts)}`);
  check("the sessions are spread over more than one instance", Object.values(counts).filter((n) => n > 0).length >= 2, JSON.stringify(counts));
  check(
    "every reply through the fleet equals the single instance's",
    SESSIONS.every((s) => JSON.stringify(viaFleet[s].texts) === JSON.stringify(viaRef[s].texts)),
  );
  const oneEpisode = SESSIONS.filter((s) => new Set(viaFleet[s].episodes).size !== 1 || !viaFleet[s].episodes[0]?.startsWith(`${owner[s]}/${s}/`));
  check(
    "every answer (gRPC, HTTP, errors) names its instance and one episode per session, <instance>/<session>/...: LoadScript's answer names the episode the calls then join",
    oneEpisode.length === 0,
    oneEpisode.map((s) => `${s}: ${viaFleet[s].episodes.join(",")}`).join("; "),
  );
  remember(viaFleet);
  check(
    "VerifySession through the fleet equals the single instance's",
    SESSIONS.every((s) => JSON.stringify(viaFleet[s].verify) === JSON.stringify(viaRef[s].verify)),
  );

  // Each instance's own view (direct, not through the balancer): ListSessions, aggregated.
  const direct = Object.fromEntries(fleet.map((m) => [m.name, connect(m.grpc)]));
  const listed = {};
  for (const m of fleet) for (const s of await direct[m.name].listSessions()) (listed[s.name] ??= []).push({ on: m.name, calls: s.calls });
  const badList = SESSIONS.filter((s) => listed[s]?.length !== 1 || listed[s][0].on !== owner[s] || listed[s][0].calls !== 5);
  check(
    "ListSessions on each instance, aggregated: every session is on exactly the instance that answered it, with its 5 calls",
    badList.length === 0,
    badList.map((s) => `${s}: ${JSON.stringify(listed[s])}`).join("; "),
  );

  const fleetEpisodes = await episodes(lbClient, SESSIONS);
  const refClient = connect(ref.grpc);
  const refEpisodes = await episodes(refClient, SESSIONS);
  const differ = SESSIONS.filter((s) => !eq(fleetEpisodes[s].bytes, refEpisodes[s].bytes));
  check(
    "GetEpisode through the balancer reached each session's instance",
    SESSIONS.every((s) => fleetEpisodes[s].instance === owner[s]),
  );
  check(
    "each session's episode through the balancer is byte-equal to the same session driven against one instance (60 of 60)",
    differ.length === 0,
    differ.length ? `${differ.length} differ: ${differ.join(",")}` : "",
  );
  const calls = (await lbClient.control("GetEpisode", SESSIONS[0])).response.episode.calls;
  check(
    "an episode holds the session's 5 calls in order (sequence 1..5)",
    calls.map((c) => c.sequence).join() === "1,2,3,4,5",
    calls.map((c) => c.sequence).join(),
  );

  // ControlService without the session header: the balancer cannot route it by the body's session.
  // allow_missing: no call named "default", and the instance that gets the blind call does not
  // keep the probe's session; either would be NOT_FOUND (issue 31) instead of an empty episode.
  const defaultHome = (await lbClient.control("GetEpisode", "default", { bytesOnly: true, allowMissing: true })).instance;
  const probe = SESSIONS.find((s) => owner[s] !== defaultHome);
  const blind = await lbClient.control("GetEpisode", undefined, { session: probe, bytesOnly: true, allowMissing: true });
  check(
    "without x-modelstub-session metadata, GetEpisode goes to session \"default\"'s instance, not the session's",
    blind.instance === defaultHome && !eq(blind.response.episodeBinpb, fleetEpisodes[probe].bytes),
    `${probe} lives on ${owner[probe]}; the call went to ${blind.instance} and got ${blind.response.episodeBinpb.length} bytes`,
  );

  // The library's control client (and so `modelstub session` and `modelstub episode`) sends the
  // header itself: GetEpisode through the balancer with no header set by hand.
  const { createControlClient } = await import(path.join(REPO, "dist/src/port/control-client.js"));
  const library = createControlClient(balancer);
  try {
    const viaLibrary = await library.call("GetEpisode", { session: probe, bytesOnly: true });
    check(
      "the library's control client sends x-modelstub-session itself: GetEpisode through the balancer reaches the session's instance",
      eq(viaLibrary.episodeBinpb, fleetEpisodes[probe].bytes),
      `${probe}: got ${viaLibrary.episodeBinpb.length} bytes`,
    );
  } finally {
    library.close();
  }

  // Long streams side by side: 24 sessions, two 1,000-frame GenerateStream calls each, at once.
  const words = Array.from({ length: 1000 }, (_, i) => `w${i}`).join(" ");
  const longs = Array.from({ length: 24 }, (_, i) => `long-${String(i).padStart(2, "0")}`);
  const longRuns = await Promise.all(
    longs.map(async (s) => {
      const out = [];
      for (let k = 0; k < 2; k++) {
        out.push(
          await lbClient.generateStream(s, { model: "modelstub", messages: [{ role: modelPb.Role.USER, content: words }] }).then(
            (r) => ({ ok: true, frames: r.frames.length, text: r.frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : "")).join("") }),
            (e) => ({ ok: false, error: e.message }),
          ),
        );
      }
      return out;
    }),
  );
  const longBad = longRuns.flat().filter((r) => !r.ok || r.text !== `fresh session on this instance: ${words}`);
  check(
    "48 long streams (about 1,000 frames each, 24 at a time) through the balancer all end OK with the whole reply",
    longBad.length === 0,
    longBad.length
      ? `${longBad.length} of 48 failed: ${[...new Set(longBad.map((r) => r.error ?? "wrong text"))].join("; ")}`
      : `${longRuns.flat()[0].frames} frames each`,
  );

  // ---- health under load: no healthy instance was marked DOWN while the busy loops ran
  if (busyLoops > 0) {
    stopBusy();
    if (HAPROXY) {
      const downs = lb
        .log()
        .split("\n")
        .filter((l) => / is DOWN/.test(l));
      check(
        `HAProxy marked no healthy instance DOWN under ${busyLoops} busy loops (its log: ${downs.length} DOWN transitions)`,
        downs.length === 0,
        downs.join("; "),
      );
    }
  }

  // ---- stop one instance: the one with the most sessions
  const victim = fleet.reduce((a, b) => (counts[b.name] > counts[a.name] ? b : a));
  const survivors = fleet.filter((m) => m !== victim);
  const orphans = SESSIONS.filter((s) => owner[s] === victim.name);
  const kept = SESSIONS.filter((s) => owner[s] !== victim.name);
  console.log(`fleet: stopping ${victim.name} (${orphans.length} sessions) with SIGTERM`);
  const code = await victim.stop();
  check(`${victim.name} shut down gracefully (exit 0)`, code === 0, `exit ${code}`);
  if (HAPROXY) {
    await waitForServers(adminSocket, [victim.name], "DOWN");
    const rows = await serverStats(adminSocket);
    check(
      `HAProxy took ${victim.name} out of every backend (its check failed; the others track it)`,
      rows.filter((r) => r.svname === victim.name).every((r) => r.status.startsWith("DOWN")) &&
        rows.filter((r) => r.svname !== victim.name).every((r) => r.status === "UP"),
    );
  }

  const files = orphans.filter((s) => {
    const f = path.join(victim.recordDir, `${s}.episode.binpb`);
    return fs.existsSync(f) && eq(fs.readFileSync(f), refEpisodes[s].bytes);
  });
  check(
    `the stopped instance wrote each of its ${orphans.length} sessions' episodes to its --record-dir, byte-equal to the reference`,
    files.length === orphans.length,
    `${files.length} of ${orphans.length}`,
  );

  const after = await drive(balancer, balancerHttp, SESSIONS, "more");
  movesSeen(`SIGTERM (${victim.name})`, after, orphans);
  await drive(ref.grpc, ref.http, kept, "more");
  const moved = kept.filter((s) => after[s].instances[0] !== owner[s]);
  check("sessions hashed to the surviving instances stay where they were", moved.length === 0, moved.join(","));
  const keptEpisodes = await episodes(lbClient, kept);
  const keptRef = await episodes(refClient, kept);
  const keptDiffer = kept.filter((s) => !eq(keptEpisodes[s].bytes, keptRef[s].bytes));
  check(
    `their episodes go on untouched: ${kept.length} of ${kept.length} byte-equal to the reference after one more call`,
    keptDiffer.length === 0,
    keptDiffer.join(","),
  );
  const orphanOk = orphans.filter(
    (s) => survivors.some((m) => m.name === after[s].instances[0]) && after[s].texts[0] === `fresh session on this instance: six, after the stop, from ${s}`,
  );
  check(
    "the stopped instance's sessions move to a survivor and start afresh there (new episode, the server's script)",
    orphanOk.length === orphans.length,
    `${orphanOk.length} of ${orphans.length}`,
  );
  const fresh = await episodes(lbClient, orphans);
  check(
    "...where their episode holds only the call made after the move",
    (await Promise.all(orphans.map((s) => lbClient.control("GetEpisode", s)))).every((r) => r.response.episode.calls.length === 1) &&
      orphans.every((s) => fresh[s].bytes.length > 0),
  );

  // ResetSession reaches the right instance too.
  const target = kept[0];
  const reset = await lbClient.control("ResetSession", target);
  const afterReset = (await direct[owner[target]].listSessions()).find((s) => s.name === target);
  check(
    "ResetSession through the balancer resets the session on its instance",
    reset.instance === owner[target] && reset.response.calls === 6 && afterReset?.calls === 0,
    `answered by ${reset.instance}, closed ${reset.response.calls} calls, now ${afterReset?.calls}`,
  );
  const healthAfter = await Promise.all([0, 1, 2, 3].map(() => lbClient.healthCheck("")));
  check(
    "health through the balancer still answers SERVING with one instance stopped",
    healthAfter.every((r) => r.response.status === 1 && r.instance !== victim.name),
  );
  // The reset session's episode changed on purpose: what the client did itself is no move.
  last[target] = { instance: owner[target], episode: reset.episode };

  const up = fleet.filter((m) => m !== victim);
  if (HAPROXY) {
    // ---- a restart: the stopped instance comes back under the same --instance; its sessions
    // return to it, to a new process: the same instance id, a new episode.
    const back = await victim.restart();
    started.push(back);
    await waitForServers(adminSocket, [victim.name], "UP");
    const returned = await drive(balancer, balancerHttp, SESSIONS, "more");
    const home = movesSeen(`a restart of ${victim.name} under the same --instance`, returned, []);
    check(
      `...its sessions came back to it (${home.length} of ${orphans.length}), naming the same instance as before the stop`,
      orphans.every((s) => returned[s].instances[0] === victim.name) && home.length === orphans.length,
    );
    up.push(back);

    // ---- a flapping health check: an instance marked DOWN, then UP, as a slow check would
    const flapped = survivors.reduce((a, b) => (counts[b.name] > counts[a.name] ? b : a));
    await admin(adminSocket, `disable health modelstub_grpc/${flapped.name}`);
    const downAnswer = await admin(adminSocket, `set server modelstub_grpc/${flapped.name} health down`);
    await waitForServers(adminSocket, [flapped.name], "DOWN");
    const during = await drive(balancer, balancerHttp, SESSIONS, "more");
    const away = movesSeen(`a flapping health check, ${flapped.name} marked DOWN`, during, []);
    await admin(adminSocket, `set server modelstub_grpc/${flapped.name} health up`);
    await admin(adminSocket, `enable health modelstub_grpc/${flapped.name}`);
    await waitForServers(adminSocket, [flapped.name], "UP");
    const afterFlap = await drive(balancer, balancerHttp, SESSIONS, "more");
    const returning = movesSeen(`a flapping health check, ${flapped.name} UP again`, afterFlap, []);
    check(
      `...the flapped instance's sessions moved away and back (${away.length} and ${returning.length}), every one seeing both moves`,
      away.length > 0 && away.length === returning.length && away.every((s) => returning.includes(s)),
      downAnswer.trim(),
    );
  }

  // ---- SIGKILL with calls in flight: what each client sees, and what it sees next
  const sessionsOf = (m) => SESSIONS.filter((s) => last[s].instance === m.name);
  const killed = up.reduce((a, b) => (sessionsOf(b).length > sessionsOf(a).length ? b : a));
  const onKilled = sessionsOf(killed);
  // Held: the sessions that have had the session script since the start (those moved there by
  // an earlier stop started afresh on the server's script, which holds nothing).
  const held = onKilled.filter((s) => owner[s] === killed.name);
  const killedClient = connect(killed.grpc);
  const inflight = drive(balancer, balancerHttp, held, "inflight");
  await waitFor(
    `${held.length} calls held on ${killed.name}`,
    async () => (await killedClient.listSessions()).filter((x) => held.includes(x.name)).reduce((n, x) => n + x.running, 0) === held.length,
  );
  killedClient.close();
  console.log(`fleet: killing ${killed.name} (SIGKILL) with ${held.length} calls in flight`);
  await killed.kill();
  const ends = await inflight;
  const seen = {};
  for (const s of held) {
    const e = ends[s];
    const key = `${e.streamed ? "stream" : "unary"}${e.streamed ? ` after ${e.frames} frames` : ""}: ${e.code} ${e.details}`;
    seen[key] = (seen[key] ?? 0) + 1;
  }
  console.log(`fleet: statuses behind ${o.proxy} when ${killed.name} died mid-call:`);
  for (const [k, n] of Object.entries(seen)) console.log(`fleet:   ${n} x ${k}`);
  check(
    `every call in flight on the killed instance ended with an error, none OK, none left hanging (${held.length})`,
    held.every((s) => ends[s].code !== 0),
  );
  if (HAPROXY) await waitForServers(adminSocket, [killed.name], "DOWN");
  const afterKill = await drive(balancer, balancerHttp, SESSIONS, "more");
  const movedByKill = movesSeen(`SIGKILL (${killed.name})`, afterKill, []);
  check(
    `...the killed instance's sessions all moved (${movedByKill.length} of ${onKilled.length})`,
    onKilled.every((s) => movedByKill.includes(s)) && movedByKill.length === onKilled.length,
  );

  for (const c of [lbClient, refClient, ...Object.values(direct)]) c.close();
} catch (err) {
  check("the fleet test ran to its end", false, String(err?.stack ?? err));
} finally {
  await cleanup();
  if (!o.keep) fs.rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
