import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { GenerateRequestSchema, MessageSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { Code, ModelCallError } from "../../src/index.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder, type RunningRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { startFakeUpstream, type FakeAnswer, type FakeUpstream } from "../support/fake-openai-upstream.js";
import { collect } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

const request = (text: string) => create(GenerateRequestSchema, { messages: [create(MessageSchema, { role: Role.USER, content: text })] });
const codeOf = (err: unknown) => (err instanceof ModelCallError ? err.code : -1);

describe("modelstub record's failures, over its gRPC front", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
  });

  async function recorderFor(answers: FakeAnswer[], timeoutMs?: number): Promise<{ recorder: RunningRecorder; upstream: FakeUpstream }> {
    const upstream = await startFakeUpstream(answers);
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(upstream.baseUrl, { timeoutMs, model: "up-model" }), defaultModel: "up-model" });
    open.push(upstream, recorder);
    return { recorder, upstream };
  }

  it("records an upstream that does not answer in time as a timeout, a stream whose link resets as a drop, and names the default model", async () => {
    // The upstream never answers: only the recorder's own upstream timeout ends the call.
    const { recorder, upstream } = await recorderFor([{ kind: "silent" }, { kind: "sse-break", deltas: ["one ", "two "] }], 300);
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(port);
    const timedOut = await port.generate(request("slow?"), { session: "s1" }).catch((e: unknown) => e);
    expect(codeOf(timedOut)).toBe(Code.DEADLINE_EXCEEDED);
    const broken = await collect(port.generateStream(request("stream"), { session: "s1" }));
    // The reset the upstream's link had, as grpc-js reports a reset stream.
    expect(codeOf(broken.error)).toBe(Code.INTERNAL);
    expect(broken.frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : "")).join("")).toBe("one two ");
    expect(upstream.received[0]!.body["model"]).toBe("up-model");
    const script = recorder.scriptText();
    const compiled = loadScriptText(script, "r.yaml");
    expect(compiled.defaultModel).toBe("up-model");
    expect(script).toMatch(/- timeout: true/);
    expect(script).toMatch(/text: "one two "\n\s+break:\n\s+after_chunks: 2\n\s+then: drop\n/);
    // A second session is refused, not mixed into the first one's script.
    const other = await port.generate(request("hi"), { session: "s2" }).catch((e: unknown) => e);
    expect(codeOf(other)).toBe(Code.FAILED_PRECONDITION);
    expect(recorder.recording.calls).toBe(2);
  });

  it("records an upstream it cannot reach as UNAVAILABLE, naming it without the query its URL held", async () => {
    const upstream = await startFakeUpstream([]);
    await upstream.close();
    for (const baseUrl of [upstream.baseUrl, `${upstream.baseUrl}?key=q-SECRET`]) {
      const recorder = await startRecorder({ upstream: createOpenAiUpstream(baseUrl) });
      open.push(recorder);
      const port = openGrpcPort(recorder.grpcAddress);
      open.push(port);
      expect(codeOf(await port.generate(request("hi")).catch((e: unknown) => e))).toBe(Code.UNAVAILABLE);
      expect(recorder.scriptText()).toMatch(/code: UNAVAILABLE\n\s+message: "upstream http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions unreachable/);
      expect(recorder.scriptText()).not.toContain("SECRET");
    }
  });
});
