import { afterEach, describe, expect, it } from "vitest";
import { Code, ModelCallError, startServer } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createGrpcUpstream } from "../../src/upstream-recorder/grpc-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { collect, userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/**
 * A gRPC upstream (a second modelstub) that answers DEADLINE_EXCEEDED itself, at once, while
 * the client's deadline is still far off: the recorder must record the upstream's status, not
 * mistake it for the client's cut-off (a hang, which a replay would hold open until the
 * client's whole deadline passed).
 */
const clientDeadlineMs = 5000;

const failure = (err: unknown) => (err instanceof ModelCallError ? { code: err.code, details: err.details } : { other: String(err) });

describe("modelstub record against a gRPC upstream that times out itself", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  async function recorderFor(upstreamScript: string, clock: "virtual" | "real" = "virtual") {
    const upstream = await startServer({ clock, script: upstreamScript });
    const recorder = await startRecorder({ upstream: createGrpcUpstream(upstream.grpcAddress), keepChunks: true });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(upstream, recorder, port);
    return { recorder, port };
  }

  async function replayOf(script: string) {
    const replay = await startServer({ clock: "virtual", script });
    const port = openGrpcPort(replay.grpcAddress);
    open.push(replay, port);
    return port;
  }

  it("records a unary DEADLINE_EXCEEDED the upstream sent before the client's deadline as a timeout, which replays at once", async () => {
    const { recorder, port } = await recorderFor("entries: [{ timeout: true, repeat: true }]\n");
    // The client got the upstream's own status, not its own deadline's.
    const recorded = await port.generate(userRequest("weather?"), { timeoutMs: clientDeadlineMs }).catch(failure);
    expect(recorded).toEqual({ code: Code.DEADLINE_EXCEEDED, details: "scripted timeout at entries[0]" });
    const script = recorder.scriptText();
    expect(script).toContain("timeout: true");
    expect(script).not.toContain("hang: true");
    // The replay answers with the scripted timeout, not a hang the client's deadline ends.
    const replay = await replayOf(script);
    expect(await replay.generate(userRequest("weather?"), { timeoutMs: clientDeadlineMs }).catch(failure)).toEqual({
      code: Code.DEADLINE_EXCEEDED,
      details: "scripted timeout at entries[0]",
    });
  });

  it("records a stream the upstream timed out before its first chunk as a timeout", async () => {
    const { recorder, port } = await recorderFor("entries: [{ timeout: true, repeat: true }]\n");
    const { frames, error } = await collect(port.generateStream(userRequest("weather?"), { timeoutMs: clientDeadlineMs }));
    expect({ frames: frames.length, ...failure(error) }).toEqual({ frames: 0, code: Code.DEADLINE_EXCEEDED, details: "scripted timeout at entries[0]" });
    expect(recorder.scriptText()).toContain("timeout: true");
  });

  it("records a stream the upstream broke with its own DEADLINE_EXCEEDED after two chunks as those chunks and that status", async () => {
    const { recorder, port } = await recorderFor(`entries:
  - reply: { text: "Alles erledigt: Wetter", chunks: ["Alles erledigt: ", "Wetter"] }
    break: { after_chunks: 2, then: error, error: { code: DEADLINE_EXCEEDED, message: "model took too long" } }
`);
    const seen = async (stream: ReturnType<typeof port.generateStream>) => {
      const { frames, error } = await collect(stream);
      return { text: frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : "")).join(""), ...failure(error) };
    };
    const recorded = await seen(port.generateStream(userRequest("weather?"), { timeoutMs: clientDeadlineMs }));
    expect(recorded).toEqual({ text: "Alles erledigt: Wetter", code: Code.DEADLINE_EXCEEDED, details: "model took too long" });
    const script = recorder.scriptText();
    expect(script).toMatch(/then: error\n\s+error:\n\s+code: DEADLINE_EXCEEDED\n\s+message: model took too long\n/);
    expect(script).not.toContain("then: hang");
    const replay = await replayOf(script);
    expect(await seen(replay.generateStream(userRequest("weather?"), { timeoutMs: clientDeadlineMs }))).toEqual(recorded);
  });

  // On the real clock the upstream holds the call until the deadline passes; on the virtual one
  // it reaches the deadline at once and says so.
  for (const clock of ["real", "virtual"] as const) {
    it(`still records a call the client's own deadline cut off as a hang (upstream on the ${clock} clock)`, async () => {
      const { recorder, port } = await recorderFor("entries: [{ hang: true, repeat: true }]\n", clock);
      expect(await port.generate(userRequest("weather?"), { timeoutMs: 300 }).catch(failure)).toMatchObject({ code: Code.DEADLINE_EXCEEDED });
      const { frames, error } = await collect(port.generateStream(userRequest("weather?"), { timeoutMs: 300 }));
      expect({ frames: frames.length, code: failure(error).code }).toEqual({ frames: 0, code: Code.DEADLINE_EXCEEDED });
      // The client's deadline ends its call as the recorder's does: the entry is written just after.
      await expect.poll(() => recorder.scriptText().match(/# call \d/g)?.length).toBe(2);
      expect(recorder.scriptText().match(/hang: true/g)).toHaveLength(2);
    });
  }
});
