import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ModelCallError, Role, startServer, type StubServer } from "../../src/index.js";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";
import { runCli } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * Issue 31, item 5: a misspelt session passed silently (an empty episode, a verification of
 * nothing), so a test asserting "no calls were made" checked nothing. Reading the episode of, or
 * verifying, a session the server does not keep answers NOT_FOUND naming the closest one it
 * keeps, over gRPC, in the library and in the CLI; `allow_missing` answers as before; a reset
 * stays idempotent and creates nothing.
 */

let server: StubServer;
let control: ControlClient;

/** The error a promise rejects with. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err as ModelCallError,
  );

beforeAll(async () => {
  server = await startServer({
    script: {
      entries: [
        { reply: "hi", repeat: true },
        { reply: "limited", times: 2 },
      ],
    },
    clock: "virtual",
  });
  await server.client().generate({ messages: [{ role: Role.USER, content: "go" }] }, { session: "agent-run" });
  control = createControlClient(server.grpcAddress);
});

afterAll(async () => {
  control.close();
  await server.close();
});

describe("reading a session the server does not keep", () => {
  it("answers NOT_FOUND over gRPC for GetEpisode, ExportEpisode and VerifySession, naming the closest session", async () => {
    for (const asked of [
      control.call("GetEpisode", { session: "agent-runn" }),
      control.exportEpisode("agent-runn"),
      control.call("VerifySession", { session: "agent-runn" }),
    ]) {
      const err = await failure(asked);
      expect(err).toBeInstanceOf(ModelCallError);
      expect(err!.code).toBe(Code.NOT_FOUND);
      expect(err!.details).toContain('no session "agent-runn": the server keeps no session of that name');
      expect(err!.details).toContain('did you mean "agent-run"?');
      expect(err!.details).toContain("allow_missing");
    }
  });

  it("lists the sessions it keeps when none is close to the name asked", async () => {
    const err = await failure(control.call("GetEpisode", { session: "zzz" }));
    expect(err!.details).toContain('; it keeps "agent-run".');
  });

  it("answers the empty episode and a verification of no calls with allow_missing, as before, and creates no session", async () => {
    const got = await control.call("GetEpisode", { session: "no-calls", allowMissing: true });
    expect(got.episode?.session).toBe("no-calls");
    expect(got.episode?.calls).toEqual([]);
    const exported = await control.exportEpisode("no-calls", { allowMissing: true });
    expect(Buffer.from(exported.bytes).equals(Buffer.from(got.episodeBinpb))).toBe(true);
    const verified = await control.call("VerifySession", { session: "no-calls", allowMissing: true });
    expect(verified.satisfied).toBe(false);
    expect(verified.unused.map((u) => u.remaining)).toEqual([2]);
    expect((await control.listSessions()).map((s) => s.name)).toEqual(["agent-run"]);
  });

  it("keeps ResetSession idempotent: an unknown session resets to 0 calls, OK, and is not created", async () => {
    const reset = await control.call("ResetSession", { session: "never" });
    expect(reset.calls).toBe(0);
    expect((await control.listSessions()).map((s) => s.name)).toEqual(["agent-run"]);
    await expect(server.control.reset("never")).resolves.toBe(0);
  });

  it("counts a session created by LoadScript or SetFaultPlan as existing, before any call", async () => {
    await server.control.loadScript("loaded", { entries: [{ reply: "x" }] });
    await server.control.setFaultPlan("planned", { rules: [] });
    expect(server.control.episode("loaded").calls).toEqual([]);
    expect(server.control.verify("planned").unused.map((u) => u.remaining)).toEqual([2]);
    await server.control.deleteSession("loaded");
    await server.control.deleteSession("planned");
  });

  it("throws NOT_FOUND from the library's control for episode, episodeBytes and verify, unless allowMissing", () => {
    for (const read of [() => server.control.episode("agent_run"), () => server.control.episodeBytes("agent_run"), () => server.control.verify("agent_run")]) {
      expect(read).toThrow(ModelCallError);
      try {
        read();
      } catch (err) {
        expect((err as ModelCallError).code).toBe(Code.NOT_FOUND);
        expect((err as ModelCallError).details).toContain(
          'did you mean "agent-run"? To read the empty episode of a session expected to have had no calls, ask with { allowMissing: true }',
        );
      }
    }
    expect(server.control.episode("agent_run", { allowMissing: true }).calls).toEqual([]);
    expect(server.control.episodeBytes("agent_run", { allowMissing: true })).toEqual(server.control.episodeBytes("agent_run", { allowMissing: true }));
    expect(server.control.verify("agent_run", { allowMissing: true }).satisfied).toBe(false);
  });
});

describe("the CLI on a session the server does not keep", { timeout: testTimeoutMs(60_000) }, () => {
  it("`episode --session` exits 3 with the server's NOT_FOUND, and prints the empty episode with --allow-missing", async () => {
    const typo = await runCli(["episode", "--session", "agent-runn", "--addr", server.grpcAddress]);
    expect(typo.code).toBe(3);
    expect(typo.stdout).toBe("");
    expect(typo.stderr).toMatch(/^modelstub episode: the server answered NOT_FOUND: no session "agent-runn": .*did you mean "agent-run"\?/);
    const allowed = await runCli(["episode", "--session", "agent-runn", "--allow-missing", "--addr", server.grpcAddress]);
    expect(allowed).toEqual({ code: 0, stdout: '{\n  "session": "agent-runn"\n}\n', stderr: "" });
  });

  it("`session verify` exits 3 with NOT_FOUND, and verifies no calls with --allow-missing; `session reset` stays 0", async () => {
    const typo = await runCli(["session", "verify", "agent-runn", "--addr", server.grpcAddress]);
    expect(typo.code).toBe(3);
    expect(typo.stderr).toMatch(/^modelstub session verify: the server answered NOT_FOUND: no session "agent-runn": .*did you mean "agent-run"\?/);
    const allowed = await runCli(["session", "verify", "agent-runn", "--allow-missing", "--addr", server.grpcAddress]);
    expect(allowed.code).toBe(4);
    expect(allowed.stdout).toMatch(/^session "agent-runn": not satisfied: 1 scripted entry was not used up\n/);
    const reset = await runCli(["session", "reset", "agent-runn", "--addr", server.grpcAddress]);
    expect(reset).toEqual({ code: 0, stdout: 'session "agent-runn": reset (the episode it closed holds 0 calls)\n', stderr: "" });
  });
});
