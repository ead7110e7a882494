import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { maxStreamFrames, minCoalescedFrameChars } from "../../src/engine/plan-frames.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { defaultScript } from "../../src/script/default-script.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { splitChunks } from "../../src/shared/split-chunks.js";
import { collect, userRequest } from "../support/requests.js";

/*
 * Issue 27, item 4: one streamed 960 KB echo cost 15-25 times its unary call in CPU. Two causes,
 * both in how a reply becomes frames: the reply was cut into a string and an object per chunk
 * (192,000 for this echo) to make at most 4,096 frames; and 4,096 frames cost the transport
 * alone more than the whole unary call (every message, SSE event or HTTP/2 DATA frame costs the
 * same whatever it carries: bare grpc-js spends 17 ms of CPU on 4,097 small messages, 1 ms on one
 * of 960 KB). Now the chunks are found in place, and a reply past 4,096 chunks is coalesced into
 * frames of about 16 KiB: 59 for this echo. The CPU ratio itself is measured by the bench
 * (bench/sections/measure-echo.mjs), not here: a CPU bound would fail on a loaded machine.
 */

const echo = `PROBE-ECHO ${"word ".repeat(192_000)}`;

function stubOf(script?: string) {
  const stub = createStub({ script: script === undefined ? defaultScript() : loadScriptText(script, "test.yaml"), clock: createVirtualClock() });
  return { stub, port: createInProcessPort(stub) };
}

describe("a streamed reply past 4,096 chunks", () => {
  it("goes in one frame per 16 KiB of its text, which join to the reply, and records every chunk", async () => {
    const { stub, port } = stubOf();
    const { frames, error } = await collect(port.generateStream(userRequest(echo), { session: "s" }));
    expect(error).toBeUndefined();
    const text = `PROBE-ECHO ok: ${echo}`;
    const content = frames.filter((f) => f.frame.case === "textDelta").map((f) => f.frame.value as string);
    expect(content.length).toBeLessThanOrEqual(Math.ceil(text.length / minCoalescedFrameChars));
    expect(content.length).toBe(59);
    expect(content.join("")).toBe(text);
    // Even: every frame carries the same number of chunks but the last.
    expect(new Set(content.slice(0, -1).map((c) => splitChunks(c, { kind: "words" }).length)).size).toBe(1);
    const [call] = fromBinary(EpisodeSchema, stub.episodeBytes("s")).calls;
    expect([call!.outcome, call!.chunksSent]).toEqual([Outcome.OK, splitChunks(text, { kind: "words" }).length]);
  });

  it("is still sent a frame per chunk up to 4,096 chunks", async () => {
    const { port } = stubOf();
    // "PROBE-ECHO ok: PROBE-ECHO " is three chunks: 4,093 more make 4,096.
    const { frames } = await collect(port.generateStream(userRequest(`PROBE-ECHO ${"word ".repeat(maxStreamFrames - 3)}`), { session: "s" }));
    expect(frames.filter((f) => f.frame.case === "textDelta")).toHaveLength(maxStreamFrames);
    // One more, and its 20,496 characters go in two frames of 2,049 and 2,048 chunks.
    const { frames: more } = await collect(port.generateStream(userRequest(`PROBE-ECHO ${"word ".repeat(maxStreamFrames - 2)}`), { session: "s" }));
    expect(more.filter((f) => f.frame.case === "textDelta").map((f) => splitChunks(f.frame.value as string, { kind: "words" }).length)).toEqual([2049, 2048]);
  });
});
