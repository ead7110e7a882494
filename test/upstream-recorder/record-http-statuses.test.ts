import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "../../src/index.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { startPythonUpstream, type PythonAnswer } from "./upstreams/python-upstream.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/**
 * Every HTTP status an upstream answers with maps to a gRPC code the docs list, and replays over
 * HTTP as the very status the client got from the recorder: the upstream here is Python's
 * http.server, not a modelstub, so nothing of modelstub's own mapping leaks into the answers.
 */
const errors: [number, string][] = [
  [529, JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })],
  [502, "Bad Gateway"],
  [504, JSON.stringify({ error: { message: "upstream request timeout" } })],
  [418, JSON.stringify({ detail: "I'm a teapot" })],
  [422, JSON.stringify({ detail: [{ loc: ["body", "messages"], msg: "field required" }] })],
  [520, "web server returned an unknown error"],
  [429, JSON.stringify({ error: { message: "rate limited" } })],
  [503, JSON.stringify({ error: { message: "busy" } })],
  [500, JSON.stringify({ error: { message: "boom" } })],
];
const answers: PythonAnswer[] = errors.map(([status, body]) => ({ status, body, type: body.startsWith("{") ? "application/json" : "text/plain" }));

/** Asks `baseUrl` once per answer; the HTTP statuses and messages it answered. */
async function converse(baseUrl: string) {
  const seen: { status: number; message: unknown }[] = [];
  for (let i = 0; i < answers.length; i++) {
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "py-model", messages: [{ role: "user", content: `question ${i}` }] }),
    });
    const body = (await res.json()) as { error?: { message?: unknown } };
    seen.push({ status: res.status, message: body.error?.message });
  }
  return seen;
}

describe("modelstub record in front of a Python upstream's error statuses", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  it("answers and replays each upstream status (529, 502, 504, unlisted ones) as that status, with a documented gRPC code", async () => {
    const upstream = await startPythonUpstream(answers);
    open.push(upstream);
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(upstream.baseUrl), http: "127.0.0.1:0" });
    open.push(recorder);
    const recorded = await converse(recorder.httpUrl!);
    expect(recorded.map((s) => s.status)).toEqual(errors.map(([status]) => status));
    expect(recorded[0]!.message).toBe("Overloaded");

    const script = recorder.scriptText();
    // The codes docs/record.md lists, and the status where the code alone would answer another.
    const codes = [...script.matchAll(/code: (\w+)/g)].map((m) => m[1]);
    expect(codes).toEqual([
      "UNAVAILABLE",
      "UNAVAILABLE",
      "DEADLINE_EXCEEDED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "INTERNAL",
      "RESOURCE_EXHAUSTED",
      "UNAVAILABLE",
      "INTERNAL",
    ]);
    expect([...script.matchAll(/x-modelstub-http-status: "(\d+)"/g)].map((m) => Number(m[1]))).toEqual([529, 502, 504, 418, 422, 520]);

    const replay = await startServer({ script, clock: "virtual", http: "127.0.0.1:0" });
    open.push(replay);
    expect(await converse(replay.httpUrl!)).toEqual(recorded);
  });
});
