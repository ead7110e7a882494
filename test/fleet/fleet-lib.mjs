// What the fleet test (fleet-test.mjs), its client processes (fleet-worker.mjs) and the fleet
// bench (bench/fleet.mjs) share: free ports, modelstub instances and HAProxy as child processes,
// HAProxy's runtime API, and gRPC clients that put the session in the call's metadata, which is
// what the balancer hashes (ControlService included: its request body names the session, but a
// balancer sees only headers). It is longer than 250 lines because the clients and the processes
// are the fleet's one vocabulary, read together; nginx, used by the fleet test alone, is apart.
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import grpc from "@grpc/grpc-js";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The configuration under test: deploy/haproxy/haproxy.cfg, or FLEET_HAPROXY_CFG (to try a variant). */
export const HAPROXY_CFG = process.env.FLEET_HAPROXY_CFG || path.join(REPO, "deploy/haproxy/haproxy.cfg");
const dist = (p) => import(path.join(REPO, "dist", p));

const { serviceDefinition } = await dist("src/grpc/service-definition.js");
const modelPb = await dist("gen/modelstub/v1/model_pb.js");
const controlPb = await dist("gen/modelstub/v1/control_pb.js");
const healthPb = await dist("gen/grpc/health/v1/health_pb.js");
export { modelPb, controlPb, healthPb };

export const SESSION_HEADER = "x-modelstub-session";
/** Response headers every instance sends (--instance names it): who answered, and the session's episode. */
export const INSTANCE_HEADER = "x-modelstub-instance";
export const EPISODE_HEADER = "x-modelstub-episode";

/** Ports nobody listens on right now (bound on 127.0.0.1:0, then released). */
export async function freePorts(n) {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const s = net.createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/**
 * Waits until `check()` returns a truthy value, asking again after each answer; `limitMs` only
 * bounds a failure (what it waited for is named in the error), it is never a pass condition.
 */
export async function waitFor(what, check, limitMs = 60_000) {
  const until = Date.now() + limitMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves with the child's exit code (or signal name) once it has exited. */
export function exitOf(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode ?? child.signalCode);
    else child.once("exit", (code, signal) => resolve(code ?? signal));
  });
}

/**
 * Starts `modelstub serve` (dist/, via bin/modelstub.js) and resolves once its stderr has said
 * that gRPC (and HTTP, when asked) listen. `extra` adds flags.
 */
export async function startModelstub({ name, grpcPort, httpPort, recordDir, script, extra = [] }) {
  const args = ["bin/modelstub.js", "serve", "--grpc", `127.0.0.1:${grpcPort}`, "--clock", "virtual", "--log-level", "warn", "--instance", name, ...extra];
  if (httpPort) args.push("--http", `127.0.0.1:${httpPort}`);
  if (recordDir) args.push("--record-dir", recordDir);
  if (script) args.push("--script", script);
  const child = spawn(process.execPath, args, { cwd: REPO, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const exited = exitOf(child);
  await new Promise((resolve, reject) => {
    const onData = (d) => {
      stderr += d;
      if (stderr.includes("gRPC listening") && (!httpPort || stderr.includes("HTTP listening"))) resolve();
    };
    child.stderr.on("data", onData);
    exited.then((code) => reject(new Error(`modelstub ${name} exited (${code}) before listening:\n${stderr}`)));
  });
  child.stderr.on("data", (d) => (stderr += d));
  return {
    name,
    grpc: `127.0.0.1:${grpcPort}`,
    http: httpPort ? `http://127.0.0.1:${httpPort}` : undefined,
    recordDir,
    pid: child.pid,
    exited,
    stderr: () => stderr,
    /** SIGTERM: drains, writes episodes to --record-dir, exits 0. Resolves with the exit code. */
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
    /** SIGKILL: a crash; resolves once the process is gone. */
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
    /** The same instance again (same name, ports and flags), as a supervisor restarts it. */
    restart: () => startModelstub({ name, grpcPort, httpPort, recordDir, script, extra }),
  };
}

/**
 * Starts HAProxy in the foreground (`-db`) on deploy/haproxy/haproxy.cfg after `haproxy -c`
 * accepted it, with the addresses in its environment; resolves once the runtime API answers.
 */
export async function startHaproxy({ bind, adminSocket, instances, cfg = HAPROXY_CFG }) {
  const env = { ...process.env, FLEET_BIND: bind, FLEET_ADMIN_SOCKET: adminSocket };
  instances.forEach((m, i) => {
    env[`MS${i + 1}_GRPC`] = m.grpc;
    env[`MS${i + 1}_HTTP`] = m.http.replace(/^http:\/\//, "");
  });
  const check = spawn("haproxy", ["-c", "-f", cfg], { env, stdio: ["ignore", "pipe", "pipe"] });
  let checkOut = "";
  check.stdout.on("data", (d) => (checkOut += d));
  check.stderr.on("data", (d) => (checkOut += d));
  const checkCode = await exitOf(check);
  if (checkCode !== 0) throw new Error(`haproxy -c rejected ${cfg} (${checkCode}):\n${checkOut}`);
  const child = spawn("haproxy", ["-db", "-f", cfg], { env, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = exitOf(child);
  let died;
  exited.then((code) => (died = code));
  await waitFor("HAProxy's runtime API", async () => {
    if (died !== undefined) throw new Error(`haproxy exited (${died}):\n${log}`);
    return admin(adminSocket, "show info").then(
      (s) => s.includes("Name: HAProxy"),
      () => false,
    );
  });
  return {
    pid: child.pid,
    log: () => log,
    exited,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGUSR1"); // soft stop
      return exited;
    },
  };
}

/** One command on HAProxy's runtime API; resolves with its whole answer. */
export function admin(socketPath, command) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socketPath);
    let out = "";
    s.on("connect", () => s.end(`${command}\n`));
    s.on("data", (d) => (out += d));
    s.on("end", () => resolve(out));
    s.on("error", reject);
  });
}

/** `show stat` as rows: {pxname, svname, status, check_status, ...} for servers only. */
export async function serverStats(socketPath) {
  const lines = (await admin(socketPath, "show stat")).split("\n").filter(Boolean);
  const head = lines[0].replace(/^# /, "").split(",");
  return lines
    .slice(1)
    .map((l) => Object.fromEntries(l.split(",").map((v, i) => [head[i], v])))
    .filter((r) => r.svname !== "FRONTEND" && r.svname !== "BACKEND");
}

/** Waits until every named gRPC server is UP with a passed active check, or DOWN. */
export function waitForServers(socketPath, names, state) {
  return waitFor(`servers ${names.join(", ")} ${state} in HAProxy`, async () => {
    const rows = await serverStats(socketPath);
    return names.every((n) => {
      const r = rows.find((x) => x.pxname === "modelstub_grpc" && x.svname === n);
      return r && (state === "UP" ? r.status === "UP" && r.check_status === "L7OK" : r.status.startsWith("DOWN"));
    });
  });
}

const ModelClient = grpc.makeGenericClientConstructor(serviceDefinition(modelPb.ModelService), "ModelService");
const ControlClient = grpc.makeGenericClientConstructor(serviceDefinition(controlPb.ControlService), "ControlService");
const HealthClient = grpc.makeGenericClientConstructor(serviceDefinition(healthPb.Health), "Health");

function metadataFor(session) {
  const md = new grpc.Metadata();
  if (session !== undefined) md.set(SESSION_HEADER, session);
  return md;
}

/**
 * Who answered and in which episode: the instance's response headers, from the initial metadata,
 * or (a call that failed before any message answers "trailers-only") from the status's metadata.
 */
function answerOf(head, trailers) {
  const md = head ?? trailers;
  return { instance: md?.get(INSTANCE_HEADER)[0], episode: md?.get(EPISODE_HEADER)[0] };
}

/** A unary call; resolves {response, instance, episode}; rejects with {code, details, instance, episode}. */
function unary(client, method, schema, request, session, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    let head;
    const call = client[method](create(schema, request), metadataFor(session), { deadline: Date.now() + timeoutMs }, (err, response) =>
      err
        ? reject(Object.assign(new Error(`${method}: ${err.code} ${err.details}`), { code: err.code, details: err.details, ...answerOf(head, err.metadata) }))
        : resolve({ response, ...answerOf(head) }),
    );
    call.on("metadata", (md) => (head = md));
  });
}

/**
 * gRPC clients for one address (a balancer or an instance). Every call takes the session it
 * belongs to, sent as x-modelstub-session; `undefined` sends no header (to show what a balancer
 * does then). ControlService requests also name the session in their body, as the API wants.
 */
export function connect(address) {
  const opts = { "grpc.max_receive_message_length": 64 * 1024 * 1024 };
  const creds = grpc.credentials.createInsecure();
  const model = new ModelClient(address, creds, opts);
  const control = new ControlClient(address, creds, opts);
  const health = new HealthClient(address, creds, opts);
  return {
    /** `timeoutMs` Infinity sends no deadline: a scripted hang then holds until the call is cut. */
    generate: (session, request, timeoutMs) => unary(model, "Generate", modelPb.GenerateRequestSchema, request, session, timeoutMs),
    generateStream: (session, request, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        let head;
        const frames = [];
        const call = model.GenerateStream(create(modelPb.GenerateStreamRequestSchema, request), metadataFor(session), { deadline: Date.now() + timeoutMs });
        call.on("metadata", (md) => (head = md));
        call.on("data", (f) => frames.push(f));
        call.on("error", (err) =>
          reject(
            Object.assign(new Error(`GenerateStream: ${err.code} ${err.details}`), {
              code: err.code,
              details: err.details,
              frames: frames.length,
              ...answerOf(head, err.metadata),
            }),
          ),
        );
        call.on("end", () => resolve({ frames, ...answerOf(head) }));
      }),
    /** A ControlService call: `session` goes in the metadata (routing) and in the body. */
    control: (method, session, request = {}) =>
      unary(
        control,
        method,
        controlPb.ControlService.methods.find((m) => m.name === method).input,
        { ...request, ...(session !== undefined && method !== "ListSessions" ? { session } : {}) },
        session,
      ),
    /** ListSessions, with no session header: whichever instance the balancer picks, or this one. */
    listSessions: () => unary(control, "ListSessions", controlPb.ListSessionsRequestSchema, {}, undefined).then((r) => r.response.sessions),
    healthCheck: (service = "", session) => unary(health, "Check", healthPb.HealthCheckRequestSchema, { service }, session, 5_000),
    close: () => {
      for (const c of [model, control, health]) c.close();
    },
  };
}

/** An OpenAI chat completion over HTTP/1.1 in `session`; resolves {status, body, instance}. */
export async function chatCompletion(baseUrl, session, content) {
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", [SESSION_HEADER]: session },
    body: JSON.stringify({ model: "modelstub", messages: [{ role: "user", content }] }),
  });
  return {
    status: res.status,
    body: await res.json(),
    instance: res.headers.get(INSTANCE_HEADER) ?? undefined,
    episode: res.headers.get(EPISODE_HEADER) ?? undefined,
  };
}
