import { execFile, spawn, spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, type ClientReadableStream } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import type { ListSessionsResponse } from "../../gen/modelstub/v1/control_pb.js";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { Code } from "../../src/engine/status-code.js";
import { createControlClient } from "../../src/port/control-client.js";
import { createGrpcPort } from "../../src/port/grpc-port.js";
import { collect, userRequest } from "../support/requests.js";
import { cliPath, repoRoot, runCli, startServeProcess } from "../support/run-cli.js";

const buf = join(repoRoot, "node_modules/.bin/buf");

function bufCurl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(buf, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: 15_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-ops-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

type ServeProcess = Awaited<ReturnType<typeof startServeProcess>>;

/** Runs `modelstub serve` for the length of `use`, then SIGTERM; resolves with its stderr once it has exited 0. */
async function withServe(args: string[], env: NodeJS.ProcessEnv, use: (s: ServeProcess) => Promise<void>): Promise<string> {
  const s = await startServeProcess(args, { env });
  try {
    await use(s);
  } finally {
    // Once only: a second signal would cut the graceful shutdown short.
    if (!s.child.killed) s.child.kill("SIGTERM");
  }
  expect(await s.exit).toBe(0);
  return s.output().stderr;
}

/**
 * Resolves once `session` has `n` calls running on the server: a test acts on a call in flight
 * only once the server has it, however slowly a loaded machine delivers it (never after a sleep).
 */
async function untilRunning(address: string, session: string, n: number): Promise<void> {
  const control = createControlClient(address);
  try {
    await expect
      .poll(async () => (await control.call<ListSessionsResponse>("ListSessions", {})).sessions.find((x) => x.name === session)?.running ?? 0, { timeout: 15_000 })
      .toBe(n);
  } finally {
    control.close();
  }
}

/** Resolves once the server's health service says NOT_SERVING: the drain a signal starts has begun. */
async function untilDraining(address: string): Promise<void> {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as {
    Check(request: unknown, callback: (err: Error | null, res?: HealthCheckResponse) => void): void;
    close(): void;
  };
  const status = () =>
    new Promise<string>((resolve) => client.Check(create(HealthCheckRequestSchema, { service: "" }), (err, res) => resolve(err ? err.message : ServingStatus[res!.status])));
  try {
    await expect.poll(status, { timeout: 15_000 }).toBe("NOT_SERVING");
  } finally {
    client.close();
  }
}

/** The JSON log lines of a server's stderr with msg "call". */
function callLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l["msg"] === "call");
}

/** A self-signed certificate and its key, for `subjectAltName` (like DNS:localhost,IP:127.0.0.1). */
async function selfSigned(name: string, subjectAltName: string): Promise<{ cert: string; key: string }> {
  const key = join(dir, `${name}.key.pem`);
  const cert = join(dir, `${name}.cert.pem`);
  await new Promise<void>((resolve, reject) =>
    execFile("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", `/CN=${name}`, "-addext", `subjectAltName=${subjectAltName}`], (e) => (e ? reject(e) : resolve())),
  );
  return { cert, key };
}

const HealthClient = makeGenericClientConstructor(serviceDefinition(Health), "Health");

describe("server reflection", () => {
  let server: Awaited<ReturnType<typeof startServeProcess>>;
  beforeAll(async () => {
    server = await startServeProcess(["--grpc", "127.0.0.1:0"]);
  });
  afterAll(async () => {
    server.child.kill("SIGTERM");
    await server.exit;
  });

  for (const version of ["grpc-v1", "grpc-v1alpha"]) {
    it(`lists every service and calls Generate and GenerateStream with JSON over ${version}, with no .proto`, async () => {
      const url = `http://${server.address}`;
      const list = await bufCurl(["--reflect-protocol", version, url, "--list-services"]);
      expect(list.stdout.trim().split("\n")).toEqual(["grpc.health.v1.Health", "modelstub.v1.ControlService", "modelstub.v1.ModelService"]);
      const methods = await bufCurl(["--reflect-protocol", version, url, "--list-methods"]);
      for (const m of ["modelstub.v1.ModelService/Generate", "modelstub.v1.ModelService/GenerateStream", "modelstub.v1.ControlService/GetEpisode"]) {
        expect(methods.stdout).toContain(m);
      }
      const body = JSON.stringify({ model: "m", messages: [{ role: "ROLE_USER", content: "PROBE-ECHO reflect" }] });
      const unary = await bufCurl(["--reflect-protocol", version, "-d", body, `${url}/modelstub.v1.ModelService/Generate`]);
      expect(unary.code).toBe(0);
      expect(JSON.parse(unary.stdout).message.content).toBe("PROBE-ECHO ok: PROBE-ECHO reflect");
      const stream = await bufCurl(["--reflect-protocol", version, "-d", body, `${url}/modelstub.v1.ModelService/GenerateStream`]);
      expect(stream.code).toBe(0);
      expect(stream.stdout).toContain('"textDelta": "PROBE-ECHO "');
      expect(stream.stdout).toContain('"finishReason": "FINISH_REASON_STOP"');
    });
  }
});

describe("health", () => {
  it("is SERVING after start, NOT_SERVING while draining, and `modelstub health` exits 0, 4 and 2 accordingly", async () => {
    const script = join(dir, "slow.yaml");
    await writeFile(script, "entries:\n  - hang: true\n    repeat: true\n");
    const recordDir = join(dir, "episodes-health");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "60s"]);
    const port = createGrpcPort(s.address);
    // The call in flight holds the drain open until the test ends it: no race with a timer.
    const stop = new AbortController();
    try {
      expect(await runCli(["health", "--addr", s.address])).toMatchObject({ code: 0, stdout: "status: SERVING\n" });
      const inFlight = port.generate(userRequest("x"), { session: "drain", signal: stop.signal }).catch((e: { code: number }) => e.code);
      await untilRunning(s.address, "drain", 1);
      s.child.kill("SIGTERM");
      // Draining: the health service still answers, with NOT_SERVING; new model calls are refused.
      await untilDraining(s.address);
      expect(await runCli(["health", "--addr", s.address])).toMatchObject({ code: 4, stdout: "status: NOT_SERVING\n" });
      await expect(port.generate(userRequest("x"), { session: "late" })).rejects.toMatchObject({ code: Code.UNAVAILABLE, details: "modelstub is shutting down: it takes no new calls" });
      // The server waits for the call in flight, which ends when its client cancels it.
      stop.abort();
      expect(await inFlight).toBe(Code.CANCELLED);
    } finally {
      port.close();
    }
    expect(await s.exit).toBe(0);
    const episode = fromBinary(EpisodeSchema, await readFile(join(recordDir, "drain.episode.binpb")));
    expect(episode.calls.map((c) => c.outcome)).toEqual([Outcome.CANCELLED]);
    const nothing = await runCli(["health", "--addr", s.address, "--timeout", "300ms"]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("cannot connect");
  });

  it("exits 3 when the RPC fails and 1 on bad arguments", async () => {
    const s = await startServeProcess(["--grpc", "127.0.0.1:0"]);
    try {
      const missing = await runCli(["health", "--addr", s.address, "--service", "no.such.Service"]);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toContain("NOT_FOUND");
      expect((await runCli(["health", "--bogus"])).code).toBe(1);
    } finally {
      s.child.kill("SIGTERM");
      await s.exit;
    }
  });

  it("streams SERVING to a Watch, then NOT_SERVING once SIGTERM starts the drain", async () => {
    const script = join(dir, "slow-watch.yaml");
    await writeFile(script, "entries:\n  - latency: 3s\n    repeat: true\n    reply: finally\n");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--grace", "60s"]);
    const port = createGrpcPort(s.address);
    const client = new HealthClient(s.address, credentials.createInsecure()) as unknown as {
      Watch(request: unknown): ClientReadableStream<HealthCheckResponse>;
      close(): void;
    };
    const watch = client.Watch(create(HealthCheckRequestSchema, { service: "" }));
    const statuses: string[] = [];
    watch.on("data", (r: HealthCheckResponse) => statuses.push(ServingStatus[r.status]));
    watch.on("error", () => {});
    try {
      await expect.poll(() => statuses).toEqual(["SERVING"]);
      // A call in flight holds the drain open long enough for the change to be seen, and then
      // completes: a drain lets calls in flight finish.
      const inFlight = port.generate(userRequest("x"), { session: "watch" });
      await untilRunning(s.address, "watch", 1);
      s.child.kill("SIGTERM");
      await expect.poll(() => statuses).toEqual(["SERVING", "NOT_SERVING"]);
      expect((await inFlight).message?.content).toBe("finally");
    } finally {
      watch.cancel();
      client.close();
      port.close();
    }
    expect(await s.exit).toBe(0);
  });

  it("probes what MODELSTUB_GRPC and MODELSTUB_TLS_CERT configure when given no flags, as the image's HEALTHCHECK does", async () => {
    // A certificate for a name the probe does not dial: it trusts exactly this certificate.
    const { cert, key } = await selfSigned("modelstub.internal", "DNS:modelstub.internal");
    const s = await startServeProcess(["--control-token", "t"], { env: { MODELSTUB_GRPC: "0.0.0.0:0", MODELSTUB_TLS_CERT: cert, MODELSTUB_TLS_KEY: key } });
    try {
      const bound = `0.0.0.0:${s.address.split(":").pop()}`;
      expect(await runCli(["health"], { env: { MODELSTUB_GRPC: bound, MODELSTUB_TLS_CERT: cert } })).toEqual({ code: 0, stdout: "status: SERVING\n", stderr: "" });
      // Without the certificate the probe speaks plaintext, which the TLS server never answers.
      const plain = await runCli(["health", "--timeout", "500ms"], { env: { MODELSTUB_GRPC: bound } });
      expect(plain.code).toBe(2);
      expect(plain.stderr).toContain(`cannot connect to 127.0.0.1:${s.address.split(":").pop()}`);
      // A flag wins over the environment.
      const elsewhere = await runCli(["health", "--addr", "127.0.0.1:1", "--timeout", "300ms"], { env: { MODELSTUB_GRPC: bound, MODELSTUB_TLS_CERT: cert } });
      expect(elsewhere.code).toBe(2);
      expect(elsewhere.stderr).toContain("cannot connect to 127.0.0.1:1 ");
    } finally {
      s.child.kill("SIGTERM");
      await s.exit;
    }
  });
});

describe("graceful shutdown", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("on %s cuts calls still running at the grace deadline, writes whole episodes, and exits 0", async (signal) => {
    const script = join(dir, "hang.yaml");
    await writeFile(script, "steps:\n  hang: [ { hang: true, repeat: true } ]\n  ok: [ { reply: done, repeat: true } ]\n");
    const recordDir = join(dir, `episodes-${signal}`);
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "300ms"]);
    const port = createGrpcPort(s.address);
    const outcomes: Promise<unknown>[] = [];
    try {
      for (let i = 0; i < 5; i++) await port.generate(userRequest("x"), { session: `s${i}`, step: "ok" });
      for (let i = 0; i < 5; i++) outcomes.push(port.generate(userRequest("x"), { session: `s${i}`, step: "hang" }).then(() => "ok", (e: { code: number }) => e.code));
      for (let i = 0; i < 5; i++) await untilRunning(s.address, `s${i}`, 1);
      s.child.kill(signal);
      // Cut at the grace deadline: the client sees the server go away, never a scripted answer.
      expect(await Promise.all(outcomes)).toEqual(Array(5).fill(Code.CANCELLED));
    } finally {
      port.close();
    }
    expect(await s.exit).toBe(0);
    const files = (await readdir(recordDir)).filter((f) => f.endsWith(".binpb")).sort();
    expect(files).toEqual(["s0.episode.binpb", "s1.episode.binpb", "s2.episode.binpb", "s3.episode.binpb", "s4.episode.binpb"]);
    for (const f of files) {
      const ep = fromBinary(EpisodeSchema, await readFile(join(recordDir, f)));
      expect(ep.calls.map((c) => c.outcome)).toEqual([Outcome.OK, Outcome.CANCELLED]);
    }
    expect(s.output().stderr).toContain(`"msg":"shutting down","signal":"${signal}"`);
    expect(s.output().stderr).toContain('"msg":"grace period over: cutting off calls in flight"');
  });
});

describe("safety when exposed", () => {
  it("refuses to start on a non-loopback bind without a control token", async () => {
    const r = await runCli(["serve", "--grpc", "0.0.0.0:0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("refusing to serve ControlService on 0.0.0.0:0 without a token");
  });

  it("requires the token on ControlService: a missing or wrong one gets UNAUTHENTICATED", async () => {
    const s = await startServeProcess(["--grpc", "0.0.0.0:0", "--control-token", "s3cret"], { env: {} });
    const address = s.address.replace("0.0.0.0", "127.0.0.1");
    const none = createControlClient(address);
    const wrong = createControlClient(address, { token: "guess" });
    const right = createControlClient(address, { token: "s3cret" });
    try {
      await expect(none.call("ListSessions", {})).rejects.toMatchObject({ code: Code.UNAUTHENTICATED });
      await expect(wrong.call("ListSessions", {})).rejects.toMatchObject({ code: Code.UNAUTHENTICATED, details: "wrong control token" });
      await expect(right.call("ListSessions", {})).resolves.toBeDefined();
    } finally {
      for (const c of [none, wrong, right]) c.close();
      s.child.kill("SIGTERM");
      await s.exit;
    }
  });

  it("answers RESOURCE_EXHAUSTED for an oversized request and past the session cap, and keeps serving", async () => {
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--max-message-bytes", "10000", "--max-sessions", "2"]);
    const port = createGrpcPort(s.address);
    try {
      await expect(port.generate(userRequest("x".repeat(20_000)))).rejects.toMatchObject({ code: Code.RESOURCE_EXHAUSTED });
      await port.generate(userRequest("PROBE-ECHO a"), { session: "one" });
      await port.generate(userRequest("PROBE-ECHO b"), { session: "two" });
      await expect(port.generate(userRequest("PROBE-ECHO c"), { session: "three" })).rejects.toMatchObject({
        code: Code.RESOURCE_EXHAUSTED,
        details: expect.stringContaining("session limit reached: the server keeps at most 2 sessions"),
      });
      expect((await port.generate(userRequest("PROBE-ECHO d"), { session: "one" })).message?.content).toBe("PROBE-ECHO ok: PROBE-ECHO d");
    } finally {
      port.close();
      s.child.kill("SIGTERM");
      await s.exit;
    }
  });

  it("refuses the third call of an episode with --max-episode-calls 2, serves other sessions, and lets ResetSession lift it", async () => {
    await withServe(["--grpc", "127.0.0.1:0", "--max-episode-calls", "2"], {}, async (s) => {
      const port = createGrpcPort(s.address);
      const control = createControlClient(s.address);
      try {
        for (const word of ["a", "b"]) await port.generate(userRequest(`PROBE-ECHO ${word}`), { session: "capped" });
        await expect(port.generate(userRequest("PROBE-ECHO c"), { session: "capped" })).rejects.toMatchObject({
          code: Code.RESOURCE_EXHAUSTED,
          details: 'session "capped" has recorded 2 calls (--max-episode-calls); reset it with ControlService.ResetSession',
        });
        expect((await port.generate(userRequest("PROBE-ECHO d"), { session: "other" })).message?.content).toBe("PROBE-ECHO ok: PROBE-ECHO d");
        expect(await control.call("ResetSession", { session: "capped" })).toMatchObject({ calls: 2 });
        expect((await port.generate(userRequest("PROBE-ECHO e"), { session: "capped" })).message?.content).toBe("PROBE-ECHO ok: PROBE-ECHO e");
      } finally {
        port.close();
        control.close();
      }
    });
  });

  it("refuses calls once an episode has recorded --max-episode-bytes, serves other sessions, and lets ResetSession lift it", async () => {
    // Each call records its request and the echo of it: about 1.7 kB, so the cap of 2000 bytes
    // is passed by the second call and the third is refused.
    const long = `PROBE-ECHO ${"x".repeat(800)}`;
    await withServe(["--grpc", "127.0.0.1:0"], { MODELSTUB_MAX_EPISODE_BYTES: "2000" }, async (s) => {
      const port = createGrpcPort(s.address);
      const control = createControlClient(s.address);
      try {
        for (let i = 0; i < 2; i++) await port.generate(userRequest(long), { session: "big" });
        const refused = await port.generate(userRequest(long), { session: "big" }).catch((e: { code: number; details: string }) => e);
        expect(refused).toMatchObject({ code: Code.RESOURCE_EXHAUSTED, details: expect.stringMatching(/^the episode of session "big" has recorded \d+ bytes, at its limit of 2000 \(--max-episode-bytes\); reset it with ControlService.ResetSession$/) });
        const recorded = Number(/recorded (\d+) bytes/.exec((refused as { details: string }).details)![1]);
        expect(recorded).toBeGreaterThanOrEqual(3000);
        // The count is the recorded calls' encoded size: the episode's bytes plus a few per call.
        const { episodeBinpb } = await control.call<{ episodeBinpb: Uint8Array }>("GetEpisode", { session: "big" });
        expect(episodeBinpb.length - recorded).toBeGreaterThan(0);
        expect(episodeBinpb.length - recorded).toBeLessThan(20);
        expect((await port.generate(userRequest(long), { session: "small" })).message?.content).toBe(`PROBE-ECHO ok: ${long}`);
        expect(await control.call("ResetSession", { session: "big" })).toMatchObject({ calls: 2 });
        expect((await port.generate(userRequest(long), { session: "big" })).message?.content).toBe(`PROBE-ECHO ok: ${long}`);
      } finally {
        port.close();
        control.close();
      }
    });
  });

  it("serves TLS with --tls-cert and --tls-key, and `modelstub health --tls` trusts a given CA", async () => {
    const { cert, key } = await selfSigned("localhost", "DNS:localhost,IP:127.0.0.1");
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key]);
    try {
      expect(s.output().stdout).toContain("(TLS)");
      expect((await runCli(["health", "--addr", s.address, "--tls", "--tls-ca", cert])).code).toBe(0);
      // A plaintext probe never gets through the TLS handshake: it cannot connect (2).
      const plain = await runCli(["health", "--addr", s.address, "--timeout", "500ms"]);
      expect(plain.code).toBe(2);
      expect(plain.stderr).toContain("cannot connect");
    } finally {
      s.child.kill("SIGTERM");
      await s.exit;
    }
  });
});

describe("logs", () => {
  it("write one JSON line per call with session, method, step, entry, outcome, code and declared latency", async () => {
    const script = join(dir, "logged.yaml");
    await writeFile(script, "steps:\n  plan:\n    - latency: 20ms\n      reply: hi\n    - error: { code: UNAVAILABLE, message: busy }\n");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0"]);
    const port = createGrpcPort(s.address);
    try {
      await port.generate(userRequest("x"), { session: "logs", step: "plan" });
      await port.generate(userRequest("x"), { session: "logs", step: "plan" }).catch(() => undefined);
    } finally {
      port.close();
      s.child.kill("SIGTERM");
      await s.exit;
    }
    const calls = s
      .output()
      .stderr.trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l["msg"] === "call");
    expect(calls).toEqual([
      { level: "info", msg: "call", transport: "grpc", method: "Generate", session: "logs", step: "plan", entry: "steps.plan[0]", sequence: 1, outcome: "OK", code: "OK", declared_ms: 20 },
      { level: "info", msg: "call", transport: "grpc", method: "Generate", session: "logs", step: "plan", entry: "steps.plan[1]", sequence: 2, outcome: "ERROR", code: "UNAVAILABLE", declared_ms: 0 },
    ]);
  });

  it("are silent per call with --quiet, and readable text with --log-format text", async () => {
    for (const [flags, check] of [
      [["--quiet"], (err: string) => expect(err).not.toContain("call")],
      [["--log-format", "text"], (err: string) => expect(err).toContain("modelstub info: call transport=grpc method=Generate session=default entry=entries[4]")],
    ] as const) {
      const s = await startServeProcess(["--grpc", "127.0.0.1:0", ...flags]);
      const port = createGrpcPort(s.address);
      await port.generate(userRequest("PROBE-ECHO x"));
      port.close();
      s.child.kill("SIGTERM");
      await s.exit;
      check(s.output().stderr);
    }
  });

  it("write one line for each refused call too: episode cap, session cap, bad session name and drain", async () => {
    const script = join(dir, "refused.yaml");
    await writeFile(script, "steps:\n  fast: [ { reply: ok, repeat: true } ]\n  slow: [ { latency: 800ms, reply: slow, repeat: true } ]\n");
    const stderr = await withServe(["--script", script, "--grpc", "127.0.0.1:0", "--max-sessions", "2", "--max-episode-calls", "1", "--grace", "5s"], {}, async (s) => {
      const port = createGrpcPort(s.address);
      const code = (p: Promise<unknown>) => p.then(() => Code.OK, (e: { code: number }) => e.code);
      try {
        await port.generate(userRequest("x"), { session: "a", step: "fast" });
        expect(await code(port.generate(userRequest("x"), { session: "a", step: "fast" }))).toBe(Code.RESOURCE_EXHAUSTED);
        const slow = port.generate(userRequest("x"), { session: "b", step: "slow" });
        await untilRunning(s.address, "b", 1);
        expect(await code(port.generate(userRequest("x"), { session: "c", step: "fast" }))).toBe(Code.RESOURCE_EXHAUSTED);
        expect((await collect(port.generateStream(userRequest("x"), { session: "bad name!", step: "fast" }))).error).toMatchObject({ code: Code.INVALID_ARGUMENT });
        s.child.kill("SIGTERM");
        await untilDraining(s.address);
        expect(await code(port.generate(userRequest("x"), { session: "late", step: "fast" }))).toBe(Code.UNAVAILABLE);
        expect((await slow).message?.content).toBe("slow");
      } finally {
        port.close();
      }
    });
    const refused = (method: string, session: string, code: string, message: string) => ({
      level: "info",
      msg: "call",
      transport: "grpc",
      method,
      session,
      step: "fast",
      entry: "",
      outcome: "REFUSED",
      code,
      declared_ms: 0,
      message: expect.stringContaining(message),
    });
    const lines = callLines(stderr);
    expect(lines.filter((l) => l["outcome"] === "REFUSED")).toEqual([
      refused("Generate", "a", "RESOURCE_EXHAUSTED", "has recorded 1 call (--max-episode-calls)"),
      refused("Generate", "c", "RESOURCE_EXHAUSTED", "session limit reached"),
      refused("GenerateStream", "bad name!", "INVALID_ARGUMENT", "invalid session name"),
      refused("Generate", "late", "UNAVAILABLE", "shutting down"),
    ]);
    expect(lines.filter((l) => l["outcome"] !== "REFUSED").map((l) => [l["session"], l["outcome"]])).toEqual([
      ["a", "OK"],
      ["b", "OK"],
    ]);
  });

  it("add the resolved configuration and the script loaded at --log-level debug, never the control token", async () => {
    const stderr = await withServe(["--grpc", "127.0.0.1:0", "--log-level", "debug"], { MODELSTUB_CONTROL_TOKEN: "s3cret-token", MODELSTUB_CLOCK: "virtual" }, async () => {});
    expect(stderr).not.toContain("s3cret-token");
    const lines = stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l["msg"] === "configuration")).toMatchObject({
      level: "debug",
      grpc: "127.0.0.1:0",
      clock: "virtual",
      "control-token": "(set)",
      "max-episode-calls": "100000",
      from_flags: ["grpc", "log-level"],
      from_env: ["MODELSTUB_CLOCK", "MODELSTUB_CONTROL_TOKEN"],
    });
    expect(lines.find((l) => l["msg"] === "script loaded")).toEqual({ level: "debug", msg: "script loaded", script: "default", file: "(built-in default)", entries: 8 });
  });

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)(
    `are readable text on a terminal without --log-format${hasScript ? "" : " (skipped: script(1) from util-linux, which runs a command under a terminal, is not installed)"}`,
    async () => {
      // script(1) gives serve a terminal for stdout and stderr; both come back on its stdout.
      const command = [process.execPath, cliPath, "serve", "--grpc", "127.0.0.1:0"].map((a) => `'${a}'`).join(" ");
      const child = spawn("script", ["-qfc", command, "/dev/null"], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      const exited = new Promise((r) => child.on("exit", r));
      try {
        await expect.poll(() => /gRPC listening on (\S+)/.exec(out)?.[1], { timeout: 10_000 }).toBeDefined();
        const port = createGrpcPort(/gRPC listening on (\S+)/.exec(out)![1]!);
        await port.generate(userRequest("PROBE-ECHO tty"));
        port.close();
        await expect.poll(() => out).toContain("modelstub info: call transport=grpc method=Generate session=default entry=entries[4]");
        expect(out).not.toContain('{"level"');
      } finally {
        child.kill("SIGTERM");
        await exited;
      }
    },
  );
});

describe("configuration", () => {
  it("takes the address and the clock from MODELSTUB_* variables, flags winning", async () => {
    const s = await startServeProcess([], { env: { MODELSTUB_GRPC: "127.0.0.1:0", MODELSTUB_CLOCK: "virtual" } });
    expect(s.output().stdout).toContain("virtual clock");
    s.child.kill("SIGTERM");
    await s.exit;
    const f = await startServeProcess(["--clock", "real"], { env: { MODELSTUB_GRPC: "127.0.0.1:0", MODELSTUB_CLOCK: "virtual" } });
    expect(f.output().stdout).toContain("real clock");
    f.child.kill("SIGTERM");
    await f.exit;
  });

  const oneCall = async (s: ServeProcess) => {
    const port = createGrpcPort(s.address);
    try {
      await port.generate(userRequest("PROBE-ECHO x"));
    } finally {
      port.close();
    }
  };

  it("takes a boolean from its variable, and a flag wins: MODELSTUB_QUIET, --quiet, and --log-level over MODELSTUB_QUIET", async () => {
    // Three servers side by side: one after another they can outlast the test's time on a loaded machine.
    const [fromVariable, flagOverVariable, levelOverVariable] = await Promise.all([
      withServe(["--grpc", "127.0.0.1:0"], { MODELSTUB_QUIET: "1" }, oneCall),
      withServe(["--grpc", "127.0.0.1:0", "--quiet"], { MODELSTUB_QUIET: "0" }, oneCall),
      // MODELSTUB_QUIET=1 in a container's environment does not hide an explicit --log-level.
      withServe(["--grpc", "127.0.0.1:0", "--log-level", "info"], { MODELSTUB_QUIET: "1" }, oneCall),
    ]);
    expect(callLines(fromVariable)).toEqual([]);
    expect(callLines(flagOverVariable)).toEqual([]);
    expect(callLines(levelOverVariable)).toHaveLength(1);
  });

  it("takes an integer from its variable, and its flag wins: MODELSTUB_MAX_SESSIONS and --max-sessions", async () => {
    const secondSession = (result: { code: number }) => async (s: ServeProcess) => {
      const port = createGrpcPort(s.address);
      try {
        await port.generate(userRequest("PROBE-ECHO x"), { session: "one" });
        result.code = await port.generate(userRequest("PROBE-ECHO x"), { session: "two" }).then(() => Code.OK, (e: { code: number }) => e.code);
      } finally {
        port.close();
      }
    };
    const fromEnv = { code: -1 };
    await withServe(["--grpc", "127.0.0.1:0"], { MODELSTUB_MAX_SESSIONS: "1" }, secondSession(fromEnv));
    expect(fromEnv.code).toBe(Code.RESOURCE_EXHAUSTED);
    const fromFlag = { code: -1 };
    await withServe(["--grpc", "127.0.0.1:0", "--max-sessions", "2"], { MODELSTUB_MAX_SESSIONS: "1" }, secondSession(fromFlag));
    expect(fromFlag.code).toBe(Code.OK);
  });

  it("takes the control token from its variable, and its flag wins: MODELSTUB_CONTROL_TOKEN and --control-token", async () => {
    const listWith = (token: string, s: ServeProcess) => {
      const control = createControlClient(s.address, { token });
      return control.call("ListSessions", {}).then(
        () => Code.OK,
        (e: { code: number }) => e.code,
      ).finally(() => control.close());
    };
    await withServe(["--grpc", "127.0.0.1:0"], { MODELSTUB_CONTROL_TOKEN: "from-env" }, async (s) => {
      expect(await listWith("from-env", s)).toBe(Code.OK);
      expect(await listWith("other", s)).toBe(Code.UNAUTHENTICATED);
    });
    await withServe(["--grpc", "127.0.0.1:0", "--control-token", "from-flag"], { MODELSTUB_CONTROL_TOKEN: "from-env" }, async (s) => {
      expect(await listWith("from-flag", s)).toBe(Code.OK);
      expect(await listWith("from-env", s)).toBe(Code.UNAUTHENTICATED);
    });
  });

  it("documents every option, with its variable, default and allowed values, in `serve --help`", async () => {
    const { serveOptions } = await import("../../src/cli/serve-options.js");
    const help = await runCli(["serve", "--help"]);
    expect(help.code).toBe(0);
    for (const o of serveOptions) {
      expect(help.stdout).toContain(`--${o.name}`);
      if (o.env) expect(help.stdout).toContain(o.env);
      if (o.default !== undefined) expect(help.stdout).toContain(`default ${o.default}`);
      if (o.values) expect(help.stdout).toContain(`one of ${o.values.join(", ")}`);
    }
    // Every value-taking option names what it takes.
    expect(help.stdout).not.toContain("VALUE");
    expect(help.stdout).toContain("--log-level LEVEL");
  });
});
