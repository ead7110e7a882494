import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder, type RecorderOptions, type RunningRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { startFakeUpstream, type FakeAnswer } from "../support/fake-openai-upstream.js";
import { userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

describe("modelstub record's shutdown and its --out file", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    // A recorder whose last write failed rejects every close(): that was asserted, not a cleanup failure.
    for (const o of open.splice(0)) await Promise.resolve(o.close()).catch(() => undefined);
  });

  /** A recorder before a fake upstream answering `answers`, its warnings collected. */
  async function recorderFor(answers: FakeAnswer[], options: Partial<RecorderOptions> = {}): Promise<{ recorder: RunningRecorder; warnings: string[] }> {
    const upstream = await startFakeUpstream(answers);
    const warnings: string[] = [];
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(upstream.baseUrl), onWarning: (m) => warnings.push(m), ...options });
    open.push(upstream, recorder);
    return { recorder, warnings };
  }

  it("answers a call the upstream has not answered by the end of the shutdown grace with UNAVAILABLE, and records that, not a hang", async () => {
    const { recorder } = await recorderFor([{ kind: "silent" }], { http: "127.0.0.1:0" });
    const pending = fetch(`${recorder.httpUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
    while (recorder.recording.calls === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await recorder.close(200);
    const res = await pending;
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("modelstub record is shutting down");
    const script = recorder.scriptText();
    expect(script).toContain("the recorder shut down before the upstream answered");
    expect(script).toMatch(/- error:\n\s+code: UNAVAILABLE\n\s+message: "modelstub record is shutting down/);
    expect(script).not.toContain("hang: true");
    expect(loadScriptText(script, "r.yaml").entryCount).toBe(1);
  });

  it("warns once, as soon as the written script passes the 512 KiB limit, and says it cannot be served", async () => {
    // Each under the 64 KiB past which a text goes to a text_file: ten of them pass 512 KiB.
    const words = ["one", "two", "six", "ten", "red", "tan", "big", "low", "far", "new"];
    const long = (word: string): FakeAnswer => ({ kind: "json", message: { content: `${word} `.repeat(15_000) }, finish: "stop" });
    const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "big.yaml");
    const { recorder, warnings } = await recorderFor(words.map(long), { out });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(port);
    await port.generate(userRequest("1"));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(warnings).toEqual([]);
    for (const q of words.slice(1)) await port.generate(userRequest(q));
    await recorder.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^${out}: the script is \\d+ bytes, over the 524288 \\(512 KiB\\) a script may hold: serve and validate refuse it`));
    expect(recorder.unservable).toMatch(/over the 524288/);
    expect((await readFile(out)).length).toBeGreaterThan(524288);
  });

  it("reports a write that fails at once, naming the file asked for rather than its temp file, and fails at close", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "gone", "x.yaml");
    const { recorder, warnings } = await recorderFor([{ kind: "json", message: { content: "hi" }, finish: "stop" }], { out });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(port);
    await port.generate(userRequest("1"));
    while (warnings.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings[0]).toMatch(new RegExp(`^cannot write ${out}: ENOENT: no such file or directory; recording goes on`));
    expect(warnings[0]).not.toContain(".tmp");
    await expect(recorder.close()).rejects.toThrow(`modelstub record: cannot write ${out}: ENOENT`);
  });
});
