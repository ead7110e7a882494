import { describe, expect, it } from "vitest";
import { Code } from "../../src/index.js";
import { createControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { selfSigned, useScratchDir, withServe } from "./serve-process-fixture.js";

// selfSigned() writes its certificates to the scratch folder.
useScratchDir();

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
    const port = openGrpcPort(s.address);
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
      const port = openGrpcPort(s.address);
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
      const port = openGrpcPort(s.address);
      const control = createControlClient(s.address);
      try {
        for (let i = 0; i < 2; i++) await port.generate(userRequest(long), { session: "big" });
        const refused = await port.generate(userRequest(long), { session: "big" }).catch((e: { code: number; details: string }) => e);
        expect(refused).toMatchObject({
          code: Code.RESOURCE_EXHAUSTED,
          details: expect.stringMatching(
            /^the episode of session "big" has recorded \d+ bytes, at its limit of 2000 \(--max-episode-bytes\); reset it with ControlService.ResetSession$/,
          ),
        });
        const recorded = Number(/recorded (\d+) bytes/.exec((refused as { details: string }).details)![1]);
        expect(recorded).toBeGreaterThanOrEqual(3000);
        // The count is the recorded calls' encoded size: the episode's bytes plus a few per call.
        const { episodeBinpb } = await control.call("GetEpisode", { session: "big" });
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
      expect(s.output().stderr).toContain("(TLS)");
      expect((await runCli(["health", "--addr", s.address, "--tls", "--tls-ca", cert, "--timeout", "60s"])).code).toBe(0);
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
