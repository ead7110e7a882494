import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { Code } from "../../src/index.js";
import { createControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { collect, userRequest } from "../support/requests.js";
import { startServeProcess } from "../support/run-cli.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { code, script } from "./failure-fixture.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the virtual clock", () => {
  // Each declared wait below is far longer than any test timeout: that the test ends at all says
  // it was not waited in real time. How fast virtual time runs is the bench's figure ("Virtual
  // time" in bench/README.md), not a bound here.
  it("completes a day of declared latency without waiting it, and records the day", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const res = await server.port.generate(userRequest("x"), { step: "slow", session: "v" });
    expect(res.message?.content).toBe("worth the wait");
    const call = server.stub.episode("v").calls[0]!;
    expect([call.startMs, call.endMs]).toEqual([0n, 86_400_000n]);
  });

  it("waits per chunk in virtual time too: 10 h + 3 x 5 h for a four-word stream", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const { frames } = await collect(server.port.generateStream(userRequest("x"), { step: "slow-stream", session: "v" }));
    expect(frames.filter((f) => f.frame.case === "textDelta")).toHaveLength(4);
    expect(server.stub.episode("v").calls[0]!.endMs).toBe(90_000_000n);
  });

  it("honours the caller's deadline in virtual time: a declared hour against a 30 min deadline ends as DEADLINE_EXCEEDED without waiting it", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    await expect(server.port.generate(userRequest("x"), { step: "long", timeoutMs: 1_800_000 })).rejects.toMatchObject({ code: Code.DEADLINE_EXCEEDED });
  });

  it("decides a declared wait against the deadline the same way every run: well inside it completes, reaching it does not", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    // A connected channel: time spent connecting counts against the first call's deadline.
    await server.port.generate(userRequest("x"), { step: "well-inside", session: "warm" });
    // The budget arrives measured, short of 5000 ms by however long the client and the server
    // took to send and read the call (tens of ms on a loaded machine): a declared wait that
    // reaches 5000 ms reaches it in every run; one 500 ms inside stays inside.
    for (let i = 0; i < 10; i++) {
      expect(await code(server.port.generate(userRequest("x"), { step: "well-inside", timeoutMs: 5000 }))).toBe(Code.OK);
      expect(await code(server.port.generate(userRequest("x"), { step: "at-deadline", timeoutMs: 5000 }))).toBe(Code.DEADLINE_EXCEEDED);
    }
    // A cut call ends where its completed waits got to: the 5 s wait never completed.
    const calls = server.stub.episode("default").calls;
    expect(calls.map((c) => c.endMs - c.startMs)).toEqual(Array.from({ length: 10 }, () => [4500n, 0n]).flat());
  });

  it("rounds the budget up to whole 10 ms, so a deadline in whole 10 ms holds to the millisecond (in process, where nothing is lost on the way)", async () => {
    const stub = createStub({ script: loadScriptText(script, "deadlines.yaml"), clock: createVirtualClock() });
    const port = createInProcessPort(stub);
    for (const timeoutMs of [5000, 4991]) {
      expect(await code(port.generate(userRequest("x"), { step: "inside-deadline", timeoutMs }))).toBe(Code.OK);
      expect(await code(port.generate(userRequest("x"), { step: "at-deadline", timeoutMs }))).toBe(Code.DEADLINE_EXCEEDED);
    }
    // 4990 ms of declared latency in a 4990 ms budget reaches it.
    expect(await code(port.generate(userRequest("x"), { step: "inside-deadline", timeoutMs: 4990 }))).toBe(Code.DEADLINE_EXCEEDED);
  });

  it("inherits defaults.latency: an entry's own keys win, the keys it leaves out come from the defaults", async () => {
    server = await startStubServer(
      `
defaults:
  latency: { first_byte: 1s, per_chunk: 200ms }
entries:
  - reply: "a b c"
  - latency: 50ms
    reply: "a b c"
  - latency: { per_chunk: 10ms }
    reply: "a b c"
`,
      { clock: "virtual" },
    );
    for (let i = 0; i < 3; i++) await collect(server.port.generateStream(userRequest("x"), { session: "d" }));
    // Three chunks: the first-byte wait, then a per-chunk wait before each of the other two.
    expect(server.stub.episode("d").calls.map((c) => Number(c.endMs - c.startMs))).toEqual([1000 + 2 * 200, 50 + 2 * 200, 1000 + 2 * 10]);
  });

  it("under `modelstub serve --clock virtual`, answers a call with a day of latency without waiting it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-virtual-"));
    const scriptPath = join(dir, "slow.yaml");
    await writeFile(scriptPath, "entries:\n  - latency: 1440m\n    reply: worth the wait\n");
    const { child, address, exit } = await startServeProcess(["--script", scriptPath, "--grpc", "127.0.0.1:0", "--clock", "virtual"]);
    const port = openGrpcPort(address);
    const control = createControlClient(address);
    try {
      const res = await port.generate(userRequest("x"), { session: "cli" });
      expect(res.message?.content).toBe("worth the wait");
      const call = (await control.call("GetEpisode", { session: "cli" })).episode!.calls[0]!;
      expect([call.startMs, call.endMs]).toEqual([0n, 86_400_000n]);
    } finally {
      port.close();
      control.close();
      child.kill("SIGTERM");
    }
    expect(await exit).toBe(0);
  });

  it("cuts a hang off at the caller's deadline without real waiting", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    await expect(server.port.generate(userRequest("x"), { step: "hang", timeoutMs: 1_800_000 })).rejects.toMatchObject({ code: Code.DEADLINE_EXCEEDED });
  });
});
