import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "../../src/library/start-server.js";
import { createGrpcPort } from "../../src/port/grpc-port.js";
import { ModelCallError } from "../../src/port/model-port.js";
import { createOpenAiUpstream } from "../../src/recorder/openai-upstream.js";
import { startRecorder } from "../../src/recorder/start-recorder.js";
import { Code } from "../../src/shared/status-code.js";
import { collect, userRequest } from "../support/requests.js";
import { startPythonUpstream, type PythonAnswer } from "./upstreams/python-upstream.js";

/** Large answers from a Python upstream (http.server): what records, and what is said when something cannot. */
describe("modelstub record, large answers", { timeout: 60_000 }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  async function recorderFor(answers: PythonAnswer[]) {
    const upstream = await startPythonUpstream(answers);
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(upstream.baseUrl), keepChunks: true });
    const port = createGrpcPort(recorder.grpcAddress);
    open.push(upstream, recorder, port);
    return { recorder, port };
  }

  const textOf = (frames: { frame: { case?: string; value?: unknown } }[]) => frames.map((f) => (f.frame.case === "textDelta" ? String(f.frame.value) : "")).join("");

  it("records a stream of 50,000 deltas whole under --keep-chunks, cut by the words rule, and replays what the client saw", async () => {
    const { recorder, port } = await recorderFor([{ stream_words: 50_000 }]);
    const recorded = await collect(port.generateStream(userRequest("long")));
    expect(recorded.error).toBeUndefined();
    expect(textOf(recorded.frames)).toBe("ab ".repeat(50_000));
    expect(recorder.recording.unrecorded).toEqual([]);
    const script = recorder.scriptText();
    expect(script).toContain("--keep-chunks not kept: the upstream's 50000 chunks would pass the size an entry may hold");
    const replay = await startServer({ script, clock: "virtual" });
    const port2 = createGrpcPort(replay.grpcAddress);
    open.push(replay, port2);
    const replayed = await collect(port2.generateStream(userRequest("long")));
    // The same text and end (the replay's engine may coalesce small chunks into fewer frames).
    expect(replayed.error).toBeUndefined();
    expect(textOf(replayed.frames)).toBe(textOf(recorded.frames));
    expect(replayed.frames.at(-1)!.frame).toEqual(recorded.frames.at(-1)!.frame);
  });

  it("says which call it could not record when a reply is past the size a script may hold, and answers it INTERNAL", async () => {
    const { recorder, port } = await recorderFor([{ reply_bytes: 10 }, { reply_bytes: 600_000 }]);
    expect((await port.generate(userRequest("short"))).message?.content).toBe("abcdefghij");
    const error = await port.generate(userRequest("huge")).catch((e: unknown) => e);
    expect(error instanceof ModelCallError ? error.code : error).toBe(Code.INTERNAL);
    expect(recorder.recording.unrecorded).toHaveLength(1);
    expect(recorder.recording.unrecorded[0]).toMatch(/^call 2 \(Generate\) -> http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: the answer cannot be written as a script entry: the script is 600\d{3} bytes; the most is 524288 \(512 KiB\)/);
  });
});
