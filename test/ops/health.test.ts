import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { Code } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { dir, selfSigned, untilDraining, untilRunning, useScratchDir, watchHealth } from "./serve-process-fixture.js";

useScratchDir();

describe("health", () => {
  it("is SERVING after start, NOT_SERVING while draining, and `modelstub health` exits 0, 4 and 2 accordingly", async () => {
    const script = join(dir, "slow.yaml");
    await writeFile(script, "entries:\n  - hang: true\n    repeat: true\n");
    const recordDir = join(dir, "episodes-health");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "60s"]);
    const port = openGrpcPort(s.address);
    // The call in flight holds the drain open until the test ends it: no race with a timer.
    const stop = new AbortController();
    try {
      expect(await runCli(["health", "--addr", s.address, "--timeout", "60s"])).toMatchObject({ code: 0, stdout: "status: SERVING\n" });
      const inFlight = port.generate(userRequest("x"), { session: "drain", signal: stop.signal }).catch((e: { code: number }) => e.code);
      await untilRunning(s.address, "drain", 1);
      s.child.kill("SIGTERM");
      // Draining: the health service still answers, with NOT_SERVING; new model calls are refused.
      await untilDraining(s.address);
      expect(await runCli(["health", "--addr", s.address, "--timeout", "60s"])).toMatchObject({ code: 4, stdout: "status: NOT_SERVING\n" });
      await expect(port.generate(userRequest("x"), { session: "late" })).rejects.toMatchObject({
        code: Code.UNAVAILABLE,
        details: "modelstub is shutting down: it takes no new calls",
      });
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
      const missing = await runCli(["health", "--addr", s.address, "--service", "no.such.Service", "--timeout", "60s"]);
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
    const port = openGrpcPort(s.address);
    const watch = watchHealth(s.address);
    const statuses = watch.statuses;
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
      watch.close();
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
      expect(await runCli(["health", "--timeout", "60s"], { env: { MODELSTUB_GRPC: bound, MODELSTUB_TLS_CERT: cert } })).toEqual({
        code: 0,
        stdout: "status: SERVING\n",
        stderr: "",
      });
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
