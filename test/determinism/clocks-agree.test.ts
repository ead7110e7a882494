import { describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { episodeDifference } from "../../src/engine/episode-difference.js";
import { Code, type ModelCallError } from "../../src/index.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer } from "../support/start-stub-server.js";

// Waits on both sides of a deadline, each clear of it by more than a loaded machine loses on the
// way: the real clock sleeps them, the virtual clock skips them, and both record the same bytes.
const script = `
steps:
  inside: [ { latency: 30ms, reply: "in time" } ]
  reaching: [ { latency: 250ms, reply: "never seen" } ]
  exactly: [ { latency: 200ms, reply: "never seen either" } ]
  stuck: [ { latency: 20ms, hang: true } ]
  half-said:
    - latency: { first_byte: 10ms, per_chunk: 10ms }
      reply: "one two three four"
      break: { after_chunks: 2, then: hang }
`;

async function drive(clock: "real" | "virtual"): Promise<Buffer> {
  const s = await startStubServer(script, { clock });
  const code = (p: Promise<unknown>) =>
    p.then(
      () => Code.OK,
      (e: ModelCallError) => e.code,
    );
  try {
    // A connected channel: connecting would spend the first call's deadline.
    await s.control.call("ListSessions", {});
    const o = { session: "clocks", timeoutMs: 200 };
    expect(await code(s.port.generate(userRequest("x"), { ...o, step: "inside" }))).toBe(Code.OK);
    expect(await code(s.port.generate(userRequest("x"), { ...o, step: "reaching" }))).toBe(Code.DEADLINE_EXCEEDED);
    expect(await code(s.port.generate(userRequest("x"), { ...o, step: "exactly" }))).toBe(Code.DEADLINE_EXCEEDED);
    expect(await code(s.port.generate(userRequest("x"), { ...o, step: "stuck" }))).toBe(Code.DEADLINE_EXCEEDED);
    const { frames, error } = await collect(s.port.generateStream(userRequest("x"), { ...o, step: "half-said" }));
    expect(frames.filter((f) => f.frame.case === "textDelta")).toHaveLength(2);
    expect(error).toMatchObject({ code: Code.DEADLINE_EXCEEDED });
    await expect.poll(() => s.stub.inFlight()).toBe(0);
    return Buffer.from(s.stub.episodeBytes("clocks"));
  } finally {
    await s.close();
  }
}

describe("the real and the virtual clock", () => {
  it("record the same episode for waits inside, reaching and past the caller's deadline", async () => {
    const real = await drive("real");
    const virtual = await drive("virtual");
    if (!real.equals(virtual)) expect.fail(`episodes differ: ${episodeDifference(fromBinary(EpisodeSchema, real), fromBinary(EpisodeSchema, virtual))}`);
    const calls = fromBinary(EpisodeSchema, virtual).calls;
    expect(calls.map((c) => c.outcome)).toEqual([
      Outcome.OK,
      Outcome.DEADLINE_EXCEEDED,
      Outcome.DEADLINE_EXCEEDED,
      Outcome.DEADLINE_EXCEEDED,
      Outcome.STREAM_BROKEN,
    ]);
    // Each ends where its completed waits got to: never at the budget, which arrives measured.
    expect(calls.map((c) => Number(c.endMs - c.startMs))).toEqual([30, 0, 0, 20, 20]);
    expect(calls[4]!.chunksSent).toBe(2);
  });
});
