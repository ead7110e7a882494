import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ModelCallError, startServer } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { collect, userRequest } from "../support/requests.js";
import { startPythonUpstream, type PythonAnswer } from "./upstreams/python-upstream.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/** Large answers from a Python upstream (http.server): what records, and what is said when something cannot. */
describe("modelstub record, large answers", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  async function recorderFor(answers: PythonAnswer[], out?: string) {
    const upstream = await startPythonUpstream(answers);
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(upstream.baseUrl), keepChunks: true, ...(out !== undefined ? { out } : {}) });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(upstream, recorder, port);
    return { recorder, port };
  }

  const textOf = (frames: { frame: { case?: string; value?: unknown } }[]) =>
    frames.map((f) => (f.frame.case === "textDelta" ? String(f.frame.value) : "")).join("");

  it("records a stream of 50,000 deltas whole under --keep-chunks, cut by the words rule, and replays what the client saw", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "modelstub-large-")), "stream.yaml");
    const { recorder, port } = await recorderFor([{ stream_words: 50_000 }], out);
    const recorded = await collect(port.generateStream(userRequest("long")));
    expect(recorded.error).toBeUndefined();
    expect(textOf(recorded.frames)).toBe("ab ".repeat(50_000));
    expect(recorder.recording.unrecorded).toEqual([]);
    await recorder.close();
    const script = await readFile(out, "utf8");
    expect(script).toContain("--keep-chunks not kept: the upstream's 50000 chunks would pass the size an entry may hold");
    expect(script).toContain("text_file: stream.replies/call-1.txt");
    const replay = await startServer({ scriptFile: out, clock: "virtual" });
    const port2 = openGrpcPort(replay.grpcAddress);
    open.push(replay, port2);
    const replayed = await collect(port2.generateStream(userRequest("long")));
    // The same text and end (the replay's engine may coalesce small chunks into fewer frames).
    expect(replayed.error).toBeUndefined();
    expect(textOf(replayed.frames)).toBe(textOf(recorded.frames));
    expect(replayed.frames.at(-1)!.frame).toEqual(recorded.frames.at(-1)!.frame);
  });

  it("records a 600 KB reply as a text_file beside the script, which a replay of the script file answers byte for byte", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "modelstub-large-")), "recorded.yaml");
    const { recorder, port } = await recorderFor([{ reply_bytes: 10 }, { reply_bytes: 600_000 }], out);
    const short = await port.generate(userRequest("short"));
    const huge = await port.generate(userRequest("huge"));
    expect(huge.message?.content).toHaveLength(600_000);
    await recorder.close();
    expect(recorder.recording.unrecorded).toEqual([]);
    const script = await readFile(out, "utf8");
    expect(script).toContain("text_file: recorded.replies/call-2.txt");
    expect(Buffer.byteLength(script)).toBeLessThan(4096);
    expect(await readFile(join(dirname(out), "recorded.replies", "call-2.txt"), "utf8")).toBe(huge.message?.content);
    const replay = await startServer({ scriptFile: out, clock: "virtual" });
    const port2 = openGrpcPort(replay.grpcAddress);
    open.push(replay, port2);
    expect(await port2.generate(userRequest("short"))).toEqual(short);
    expect(await port2.generate(userRequest("huge"))).toEqual(huge);
  });

  it("says which call it could not record when a reply is past what a text_file holds (1 MiB), and answers it INTERNAL", async () => {
    const { recorder, port } = await recorderFor([{ reply_bytes: 10 }, { reply_bytes: 1_200_000 }]);
    expect((await port.generate(userRequest("short"))).message?.content).toBe("abcdefghij");
    const error = await port.generate(userRequest("huge")).catch((e: unknown) => e);
    expect(error instanceof ModelCallError ? error.code : error).toBe(Code.INTERNAL);
    expect(recorder.recording.unrecorded).toHaveLength(1);
    expect(recorder.recording.unrecorded[0]).toMatch(
      /^call 2 \(Generate\) -> http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: the answer cannot be written as a script entry: cannot read text_file "replies\/call-2\.txt": the file is 1200000 bytes; a text_file holds at most 1048576 \(1 MiB\)$/,
    );
    expect(recorder.textFiles.size).toBe(0);
  });
});
