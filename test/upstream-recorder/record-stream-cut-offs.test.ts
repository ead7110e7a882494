import { fromBinary } from "@bufbuild/protobuf";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EpisodeSchema, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import { Code, ModelCallError, startServer } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createGrpcUpstream } from "../../src/upstream-recorder/grpc-upstream.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { startFakeUpstream } from "../support/fake-openai-upstream.js";
import { collect, userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/**
 * An upstream whose stream stalls after two chunks, and one whose link drops after two. Each
 * reply is all in the chunks before the break: an episode keeps the scripted reply whole, and
 * what the upstream never sent the recorder cannot know (docs/record.md).
 */
const upstreamScript = `
steps:
  stalls:
    - reply: { text: "one two ", chunks: ["one ", "two "] }
      break: { after_chunks: 2, then: hang }
  drops:
    - reply: { text: "four five ", chunks: ["four ", "five "] }
      break: { after_chunks: 2, then: drop }
`;

/**
 * The calls: a stream under a deadline that stalls, then one whose link drops; what the client saw
 * of each. The deadline must pass after both chunks came through the recorder: 3 s leaves a
 * loaded machine room for that (at load 24, 400 ms did not), and the test waits it out twice.
 */
async function drive(address: string): Promise<unknown[]> {
  const port = openGrpcPort(address);
  try {
    const seen = [];
    for (const step of ["stalls", "drops"]) {
      const { frames, error } = await collect(
        port.generateStream(userRequest(step, { stepId: step }), { session: "cuts", timeoutMs: step === "stalls" ? 3_000 : undefined }),
      );
      const code = error instanceof ModelCallError ? error.code : undefined;
      seen.push({
        text: frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : "")).join(""),
        code,
        details: code === Code.INTERNAL ? (error as ModelCallError).details : undefined,
      });
    }
    return seen;
  } finally {
    port.close();
  }
}

describe("modelstub record, streams cut off part-way", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  it("records a gRPC stream the client's deadline cut off as a hang, and a dropped link as a drop, which replay to the same episode", async () => {
    const upstream = await startServer({ script: upstreamScript, clock: "virtual" });
    open.push(upstream);
    const recorder = await startRecorder({ upstream: createGrpcUpstream(upstream.grpcAddress), keepChunks: true });
    const seen = await drive(recorder.grpcAddress);
    await recorder.close();
    expect(seen).toEqual([
      { text: "one two ", code: Code.DEADLINE_EXCEEDED, details: undefined },
      { text: "four five ", code: Code.INTERNAL, details: expect.stringContaining("Received RST_STREAM with code 2") },
    ]);
    const script = recorder.scriptText();
    expect(script).toMatch(/break:\n\s+after_chunks: 2\n\s+then: hang\n/);
    expect(script).toMatch(/break:\n\s+after_chunks: 2\n\s+then: drop\n/);
    expect(script).not.toContain("DEADLINE_EXCEEDED");

    const replay = await startServer({ script, clock: "virtual" });
    open.push(replay);
    expect(await drive(replay.grpcAddress)).toEqual(seen);
    for (const server of [upstream, replay]) await expect.poll(() => server.control.episode("cuts").calls.length).toBe(2);
    const breaks = upstream.control.episode("cuts").calls.map((c) => c.streamBreak);
    expect(breaks).toEqual([StreamBreak.HANG, StreamBreak.DROP]);
    expect(fromBinary(EpisodeSchema, replay.control.episodeBytes("cuts"))).toEqual(fromBinary(EpisodeSchema, upstream.control.episodeBytes("cuts")));
    expect(Buffer.from(replay.control.episodeBytes("cuts")).equals(Buffer.from(upstream.control.episodeBytes("cuts")))).toBe(true);
  });

  it("records an HTTP upstream that closes the socket mid-stream as a dropped link", async () => {
    const upstream = await startFakeUpstream([{ kind: "sse-break", deltas: ["one ", "two "] }]);
    open.push(upstream);
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(upstream.baseUrl) });
    open.push(recorder);
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(port);
    const broken = await collect(port.generateStream(userRequest("stream")));
    expect(broken.error).toMatchObject({ code: Code.INTERNAL, details: expect.stringContaining("RST_STREAM") });
    expect(recorder.scriptText()).toMatch(/text: "one two "\n\s+break:\n\s+after_chunks: 2\n\s+then: drop\n/);
  });

  it("records an HTTP upstream's stream the client's deadline cut off after two chunks as those chunks and a hang, which the same deadline replays", async () => {
    // Two chunks at once, then silence until the test closes the server.
    const server = createServer((req, res) => {
      req.resume().on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (const d of ["one ", "two "])
          res.write(`data: ${JSON.stringify({ model: "up-model", choices: [{ index: 0, delta: { content: d }, finish_reason: null }] })}\n\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))) });
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`), keepChunks: true });
    open.push(recorder);
    // A deadline long enough for the two chunks to reach the recorder on a loaded machine.
    const cutOff = async (address: string) => {
      const port = openGrpcPort(address);
      try {
        const { frames, error } = await collect(port.generateStream(userRequest("stalls"), { timeoutMs: 1000 }));
        return {
          text: frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : "")).join(""),
          code: error instanceof ModelCallError ? error.code : undefined,
        };
      } finally {
        port.close();
      }
    };
    // While recording the client gets none of the text: the recorder answers from the whole upstream answer, which never came.
    expect((await cutOff(recorder.grpcAddress)).code).toBe(Code.DEADLINE_EXCEEDED);
    await expect.poll(() => recorder.recording.calls).toBe(1);
    await expect.poll(() => recorder.scriptText()).toMatch(/chunks:\n\s+- "one "\n\s+- "two "\n\s+break:\n\s+after_chunks: 2\n\s+then: hang\n/);
    expect(recorder.scriptText()).not.toContain("hang: true");

    const replay = await startServer({ script: recorder.scriptText(), clock: "virtual" });
    open.push(replay);
    expect(await cutOff(replay.grpcAddress)).toEqual({ text: "one two ", code: Code.DEADLINE_EXCEEDED });
  });
});
