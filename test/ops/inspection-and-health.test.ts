import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { Code } from "../../src/engine/status-code.js";
import { createControlClient } from "../../src/port/control-client.js";
import { createGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { repoRoot, runCli, startServeProcess } from "../support/run-cli.js";

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
    await writeFile(script, "entries:\n  - latency: 1500ms\n    repeat: true\n    reply: finally\n");
    const recordDir = join(dir, "episodes-health");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "5s"]);
    const port = createGrpcPort(s.address);
    try {
      expect(await runCli(["health", "--addr", s.address])).toMatchObject({ code: 0, stdout: "status: SERVING\n" });
      const inFlight = port.generate(userRequest("x"), { session: "drain" });
      await new Promise((r) => setTimeout(r, 200));
      s.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 200));
      // Draining: the health service still answers, with NOT_SERVING; new model calls are refused.
      expect(await runCli(["health", "--addr", s.address])).toMatchObject({ code: 4, stdout: "status: NOT_SERVING\n" });
      await expect(port.generate(userRequest("x"), { session: "late" })).rejects.toMatchObject({ code: Code.UNAVAILABLE, details: "modelstub is shutting down: it takes no new calls" });
      // The call in flight completes within the grace period.
      expect((await inFlight).message?.content).toBe("finally");
    } finally {
      port.close();
    }
    expect(await s.exit).toBe(0);
    const episode = fromBinary(EpisodeSchema, await readFile(join(recordDir, "drain.episode.binpb")));
    expect(episode.calls.map((c) => c.outcome)).toEqual([Outcome.OK]);
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
});

describe("graceful shutdown", () => {
  it("on SIGTERM cuts calls still running at the grace deadline, writes whole episodes, and exits 0", async () => {
    const script = join(dir, "hang.yaml");
    await writeFile(script, "steps:\n  hang: [ { hang: true, repeat: true } ]\n  ok: [ { reply: done, repeat: true } ]\n");
    const recordDir = join(dir, "episodes-sigterm");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "300ms"]);
    const port = createGrpcPort(s.address);
    const outcomes: Promise<unknown>[] = [];
    try {
      for (let i = 0; i < 5; i++) await port.generate(userRequest("x"), { session: `s${i}`, step: "ok" });
      for (let i = 0; i < 5; i++) outcomes.push(port.generate(userRequest("x"), { session: `s${i}`, step: "hang" }).then(() => "ok", (e: { code: number }) => e.code));
      await new Promise((r) => setTimeout(r, 200));
      s.child.kill("SIGTERM");
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

  it("serves TLS with --tls-cert and --tls-key, and `modelstub health --tls` trusts a given CA", async () => {
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    await new Promise<void>((resolve, reject) =>
      execFile("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], (e) => (e ? reject(e) : resolve())),
    );
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key]);
    try {
      expect(s.output().stdout).toContain("(TLS)");
      expect((await runCli(["health", "--addr", s.address, "--tls", "--tls-ca", cert])).code).toBe(0);
      expect((await runCli(["health", "--addr", s.address, "--timeout", "500ms"])).code).not.toBe(0);
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
});

describe("configuration", () => {
  it("takes every serve option from MODELSTUB_* variables, flags winning", async () => {
    const s = await startServeProcess([], { env: { MODELSTUB_GRPC: "127.0.0.1:0", MODELSTUB_CLOCK: "virtual" } });
    expect(s.output().stdout).toContain("virtual clock");
    s.child.kill("SIGTERM");
    await s.exit;
    const f = await startServeProcess(["--clock", "real"], { env: { MODELSTUB_GRPC: "127.0.0.1:0", MODELSTUB_CLOCK: "virtual" } });
    expect(f.output().stdout).toContain("real clock");
    f.child.kill("SIGTERM");
    await f.exit;
  });

  it("documents every option, with its variable and default, in `serve --help`", async () => {
    const { serveOptions } = await import("../../src/cli/serve-options.js");
    const help = await runCli(["serve", "--help"]);
    expect(help.code).toBe(0);
    for (const o of serveOptions) {
      expect(help.stdout).toContain(`--${o.name}`);
      if (o.env) expect(help.stdout).toContain(o.env);
      if (o.default !== undefined) expect(help.stdout).toContain(`default ${o.default}`);
    }
  });
});
