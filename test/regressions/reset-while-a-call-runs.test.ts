import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { Code, type ModelCallError } from "../../src/index.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

/*
 * A reset (or reload) while a call runs used to corrupt both episodes: the running call wrote
 * into the session's new episode, under its old sequence number and timeline, and the closed
 * episode lost it. Now the reset cuts the call off, records it as cancelled in the episode it
 * started in, and the new episode starts clean.
 */

const script = `
entries:
  - latency: 10ms
    reply: one
  - latency: 20ms
    reply: two
steps:
  hang:
    - latency: 5ms
      hang: true
  stream:
    - latency: { per_chunk: 10m }
      reply: "alpha beta gamma"
`;

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The episode bytes of `calls` driven on a fresh stub: what a clean episode looks like. */
async function freshEpisode(session: string, texts: string[]): Promise<Uint8Array> {
  const stub = createStub({ script: loadScriptText(script, "test.yaml"), clock: createVirtualClock() });
  const port = createInProcessPort(stub);
  for (const t of texts) await port.generate(userRequest(t), { session });
  return stub.episodeBytes(session);
}

/** The bytes of an episode holding only `calls` of `episode`. */
const bytesOf = (episode: Episode, calls = episode.calls) => toBinary(EpisodeSchema, create(EpisodeSchema, { session: episode.session, calls }));

async function startRecording(clock: "real" | "virtual") {
  const closed: Uint8Array[] = [];
  server = await startStubServer(script, { clock, onEpisodeClosed: (e) => void closed.push(toBinary(EpisodeSchema, e)) });
  return { s: server, closed };
}

describe("ResetSession while a call of the session runs", () => {
  it("cuts the call off as cancelled into the closed episode, which stays whole, and starts the new one clean", async () => {
    const { s, closed } = await startRecording("virtual");
    await s.port.generate(userRequest("a"), { session: "r" });
    await s.port.generate(userRequest("b"), { session: "r" });
    const ac = new AbortController();
    const hung = s.port.generate(userRequest("c"), { session: "r", step: "hang", signal: ac.signal }).catch((e: ModelCallError) => e);
    await expect.poll(() => s.stub.inFlight()).toBe(1);

    const reset = await s.control.call("ResetSession", { session: "r" });
    // The closed episode's calls, the cut-off one included; it was handed over before the answer.
    expect(reset.calls).toBe(3);
    expect(closed).toHaveLength(1);
    const err = (await hung) as ModelCallError;
    expect([err.code, err.details]).toEqual([Code.CANCELLED, 'session "r" was reset while this call was running']);

    await s.port.generate(userRequest("d"), { session: "r" });
    ac.abort(); // The audit's last step: cancelling the call now changes nothing.
    await expect.poll(() => s.stub.inFlight()).toBe(0);

    const now = await s.control.call("GetEpisode", { session: "r" });
    expect(Buffer.from(now.episodeBinpb)).toEqual(Buffer.from(await freshEpisode("r", ["d"])));

    const old = fromBinary(EpisodeSchema, closed[0]!);
    expect(Buffer.from(bytesOf(old, old.calls.slice(0, 2)))).toEqual(Buffer.from(await freshEpisode("r", ["a", "b"])));
    const cut = old.calls[2]!;
    expect([cut.sequence, cut.stepId, cut.entry, cut.outcome, cut.status?.code, cut.status?.message, cut.startMs, cut.endMs]).toEqual([
      3n,
      "hang",
      "steps.hang[0]",
      Outcome.CANCELLED,
      Code.CANCELLED,
      'session "r" was reset while this call was running',
      30n,
      35n, // its declared 5 ms latency; the hang itself adds nothing
    ]);
    expect(closed).toHaveLength(1);
  });

  it("ends a stream part-way with CANCELLED, recording the chunks it sent", async () => {
    const { s, closed } = await startRecording("real");
    const stream = collect(s.port.generateStream(userRequest("x"), { session: "st", step: "stream" }));
    await expect.poll(() => s.stub.inFlight()).toBe(1);
    const reset = await s.control.call("ResetSession", { session: "st" });
    expect(reset.calls).toBe(1);
    const { frames, error } = await stream;
    expect(frames.map((f) => f.frame.value)).toEqual(["alpha "]);
    expect(error).toMatchObject({ code: Code.CANCELLED, details: 'session "st" was reset while this call was running' });
    const call = fromBinary(EpisodeSchema, closed[0]!).calls[0]!;
    expect([call.outcome, call.chunksSent, call.endMs]).toEqual([Outcome.CANCELLED, 1, 0n]);
  });

  it("answers the count of a closed episode without running calls at once, and 0 for an unknown session", async () => {
    const { s } = await startRecording("virtual");
    await s.port.generate(userRequest("a"), { session: "n" });
    await s.port.generate(userRequest("b"), { session: "n" });
    expect((await s.control.call("ResetSession", { session: "n" })).calls).toBe(2);
    expect((await s.control.call("ResetSession", { session: "n" })).calls).toBe(0);
    expect((await s.control.call("ResetSession", { session: "never-seen" })).calls).toBe(0);
  });
});

describe("LoadScript while a call of the session runs", () => {
  it("cuts the call off into the closed episode, and the next call runs on the new script from sequence 1", async () => {
    const { s, closed } = await startRecording("virtual");
    await s.port.generate(userRequest("a"), { session: "l" });
    const hung = s.port.generate(userRequest("c"), { session: "l", step: "hang" }).catch((e: ModelCallError) => e);
    await expect.poll(() => s.stub.inFlight()).toBe(1);
    const loaded = await s.control.call("LoadScript", { session: "l", script: "entries:\n  - reply: reloaded\n", sourceName: "new.yaml" });
    expect(loaded.entries).toBe(1);
    expect(await hung).toMatchObject({ code: Code.CANCELLED, details: 'a new script was loaded into session "l" while this call was running' });
    expect((await s.port.generate(userRequest("d"), { session: "l" })).message?.content).toBe("reloaded");

    const old = fromBinary(EpisodeSchema, closed[0]!);
    expect(old.calls.map((c) => [c.sequence, c.outcome])).toEqual([
      [1n, Outcome.OK],
      [2n, Outcome.CANCELLED],
    ]);
    const now = (await s.control.call("GetEpisode", { session: "l" })).episode!;
    expect(now.calls.map((c) => [c.sequence, c.startMs, c.response?.message?.content])).toEqual([[1n, 0n, "reloaded"]]);
  });
});
