import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { episodeDifference } from "../../src/engine/episode-difference.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { createControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { driveScenario, goldenPath, scenarioPath, scenarioScript } from "../support/determinism-scenario.js";
import { userRequest } from "../support/requests.js";
import { startServeProcess } from "../support/run-cli.js";
import { startStubServer } from "../support/start-stub-server.js";

/** Byte equality, with the first differing field in the failure message. */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array) {
  const a = Buffer.from(actual);
  const b = Buffer.from(expected);
  if (a.equals(b)) return;
  const diff = episodeDifference(fromBinary(EpisodeSchema, a), fromBinary(EpisodeSchema, b));
  expect.fail(`episode bytes differ (${a.length} vs ${b.length} bytes): ${diff ?? "fields equal, bytes differ"}`);
}

/** Runs the scenario over gRPC; `driveMs` is the wall time of driving it alone (no start-up). */
async function scenarioOverGrpc(
  clock: "real" | "virtual",
  { session = "scenario", script = scenarioScript, hangDeadlineMs = 100 } = {},
): Promise<{ bytes: Uint8Array; driveMs: number }> {
  const s = await startStubServer(script, { clock });
  try {
    const t = performance.now();
    await driveScenario(s.port, session, { hangDeadlineMs });
    const driveMs = performance.now() - t;
    // The server records a call when it has ended it; the last one was cut off client-side.
    await expect.poll(() => s.stub.inFlight()).toBe(0);
    const res = await s.control.call("GetEpisode", { session });
    return { bytes: res.episodeBinpb, driveMs };
  } finally {
    await s.close();
  }
}

/** Declared waits of the scenario scaled by `factor`: 100 ms of latency becomes 100 x factor. */
const scaledScenario = (factor: number) => scenarioScript.replace(/\b(\d+)ms\b/g, (_, n: string) => `${Number(n) * factor}ms`);

describe("the same script yields the same episode bytes", () => {
  it("in two fresh servers in the same process", async () => {
    const { bytes: first } = await scenarioOverGrpc("real");
    const { bytes: second } = await scenarioOverGrpc("real");
    expect(fromBinary(EpisodeSchema, first).calls).toHaveLength(7);
    expectSameBytes(second, first);
  });

  it("in a separate process, equal to the committed golden file", async () => {
    const { child, address, exit } = await startServeProcess(["--script", scenarioPath, "--grpc", "127.0.0.1:0"]);
    const port = openGrpcPort(address);
    const control = createControlClient(address);
    try {
      await driveScenario(port, "scenario");
      // The last call was cut off client-side; wait until the server has recorded it too.
      await expect.poll(async () => (await control.call("GetEpisode", { session: "scenario" })).episode?.calls.length).toBe(7);
      const res = await control.call("GetEpisode", { session: "scenario" });
      // Regenerate with `npm run golden:update` after an intended change, never from a test.
      expectSameBytes(res.episodeBinpb, await readFile(goldenPath));
    } finally {
      port.close();
      control.close();
      child.kill("SIGTERM");
      await exit;
    }
  });

  // Why the runs compare: the episode records only declared time (each wait as the script
  // states it, whichever clock waited it), and the hang cut off by the caller's deadline adds
  // no time on either clock. So nothing measured differs between the real and the virtual run.
  it("on the virtual clock as on the real clock, because only declared time is recorded", async () => {
    const virtual = await scenarioOverGrpc("virtual");
    const real = await scenarioOverGrpc("real");
    expectSameBytes(virtual.bytes, real.bytes);
    // The real run must wait 95 ms of latency and the hang's 100 ms deadline (the last call's
    // 5 ms latency runs inside it), less a little for timer rounding: a lower bound, which a
    // loaded machine only makes easier. That the virtual run waits for neither is the next test.
    expect(real.driveMs).toBeGreaterThanOrEqual(180);
  });

  it("on the virtual clock with an hour of declared time, without waiting it", async () => {
    // Every declared wait x36,000: 100 ms of latency becomes an hour, and the hang's deadline
    // grows with it, so each call ends the same way as in the committed run. Only declared time
    // is recorded, so the episode is the golden one with every time x36,000, nothing else. An
    // hour waited in real time would outlast the test's timeout; how fast virtual time runs is
    // the bench's figure ("Virtual time").
    const factor = 36_000;
    const { bytes } = await scenarioOverGrpc("virtual", { script: scaledScenario(factor), hangDeadlineMs: 100 * factor });
    const expected = fromBinary(EpisodeSchema, await readFile(goldenPath));
    for (const c of expected.calls) {
      c.startMs *= BigInt(factor);
      c.endMs *= BigInt(factor);
    }
    expect(expected.calls.at(-1)!.endMs).toBe(3_600_000n);
    expectSameBytes(bytes, toBinary(EpisodeSchema, create(EpisodeSchema, expected)));
  });

  it("in process, as the server would record it", async () => {
    const stub = createStub({ script: loadScriptText(scenarioScript, "scenario.yaml") });
    await driveScenario(createInProcessPort(stub), "scenario");
    expectSameBytes(stub.episodeBytes("scenario"), await readFile(goldenPath));
  });

  it("for two sessions driven concurrently as for each driven alone", async () => {
    const together = await startStubServer(scenarioScript, { clock: "virtual" });
    const alone = await startStubServer(scenarioScript, { clock: "virtual" });
    try {
      await Promise.all([driveScenario(together.port, "left"), driveScenario(together.port, "right")]);
      await driveScenario(alone.port, "left");
      await driveScenario(alone.port, "right");
      await expect.poll(() => together.stub.inFlight() + alone.stub.inFlight()).toBe(0);
      for (const session of ["left", "right"]) expectSameBytes(together.stub.episodeBytes(session), alone.stub.episodeBytes(session));
    } finally {
      await together.close();
      await alone.close();
    }
  });
});

describe("the episode records", () => {
  it("each failure as what it was: error with status, scripted timeout, cut off by deadline", async () => {
    const episode = fromBinary(EpisodeSchema, await readFile(goldenPath));
    const calls = episode.calls.map((c) => ({
      step: c.stepId,
      entry: c.entry,
      outcome: c.outcome,
      code: c.status?.code ?? 0,
      message: c.status?.message ?? "",
    }));
    expect(calls.slice(3)).toEqual([
      { step: "flaky", entry: "steps.flaky[0]", outcome: Outcome.ERROR, code: 14, message: "overloaded, try again" },
      { step: "flaky", entry: "steps.flaky[1]", outcome: Outcome.OK, code: 0, message: "" },
      { step: "slow", entry: "steps.slow[0]", outcome: Outcome.TIMED_OUT, code: 4, message: "scripted timeout at steps.slow[0]" },
      { step: "stuck", entry: "steps.stuck[0]", outcome: Outcome.DEADLINE_EXCEEDED, code: 4, message: "cut off by the caller's deadline" },
    ]);
    expect(episode.calls[3]!.status?.trailers.map((t) => [t.key, t.value])).toEqual([["retry-after-ms", "5"]]);
  });

  it("the declared timeline, sequence, session, step, entry, request and usage of every call", async () => {
    const episode = fromBinary(EpisodeSchema, await readFile(goldenPath));
    expect(episode.session).toBe("scenario");
    expect(episode.calls[2]!.chunksSent).toBe(9); // 4 words of text, a tool-call header, 4 argument fragments
    expect(episode.calls.map((c) => [Number(c.sequence), Number(c.startMs), Number(c.endMs)])).toEqual([
      [1, 0, 20],
      [2, 20, 30],
      [3, 30, 85], // 15 ms to the first chunk, then 5 ms before each of the 8 others
      [4, 85, 85],
      [5, 85, 85],
      [6, 85, 95],
      [7, 95, 100], // the hang itself adds nothing: only its declared 5 ms latency
    ]);
    const first = episode.calls[0]!;
    expect([first.session, first.stepId, first.entry, first.request?.model]).toEqual(["scenario", "plan", "steps.plan[0]", "scenario-model"]);
    // Numbers, not two undefineds agreeing: the token rule's counts for the first call.
    expect([first.usage?.inputTokens, first.usage?.outputTokens, first.usage?.totalTokens]).toEqual([13, 11, 24]);
    expect(first.response?.usage?.totalTokens).toBe(24);
    expect(first.response?.message?.toolCalls[0]?.id).toBe("call-scenario-1-0");
  });

  it("a call cut off by a client cancel as cancelled", async () => {
    const stub = createStub({ script: loadScriptText("entries:\n  - hang: true\n", "t.yaml"), clock: createVirtualClock() });
    const ac = new AbortController();
    const p = createInProcessPort(stub).generate(userRequest("x"), { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 1 });
    expect(stub.episode("default").calls[0]!.outcome).toBe(Outcome.CANCELLED);
  });
});
