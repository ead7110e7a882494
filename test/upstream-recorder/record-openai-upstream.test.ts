import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { startServer, type StubServer } from "../../src/index.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { scriptFromEpisode } from "../../src/script/episode-to-script.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-openai-upstream.js";
import { driveConversation, upstreamAnswers, type Seen } from "./conversation.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/** Serves `script` on the virtual clock with the HTTP front, drives the conversation, returns what the client saw and the episode bytes. */
async function replay(script: string): Promise<{ seen: Seen[]; bytes: Uint8Array }> {
  const server: StubServer = await startServer({ script, clock: "virtual", http: "127.0.0.1:0" });
  try {
    const seen = await driveConversation(server.httpUrl!);
    return { seen, bytes: server.control.episodeBytes("default") };
  } finally {
    await server.close();
  }
}

describe("modelstub record in front of an OpenAI-compatible upstream", { timeout: testTimeoutMs(60_000) }, () => {
  let upstream: FakeUpstream;
  let recorded: Seen[];
  let script: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream(upstreamAnswers);
    const recorder = await startRecorder({
      upstream: createOpenAiUpstream(upstream.baseUrl, { apiKey: "sk-test-SECRET" }),
      http: "127.0.0.1:0",
      keepChunks: true,
      latency: true,
      redaction: { secrets: ["sk-test-SECRET"], names: new Set(["api_key", "x-secret-header"]) },
    });
    try {
      recorded = await driveConversation(recorder.httpUrl!);
    } finally {
      await recorder.close();
    }
    script = recorder.scriptText();
  });
  afterAll(() => upstream?.close());

  it("forwards every call upstream with the key, and the upstream's own tool call ids on the way back", () => {
    expect(upstream.received).toHaveLength(6);
    for (const r of upstream.received) expect(r.headers["authorization"]).toBe("Bearer sk-test-SECRET");
    const act = upstream.received[2]!.body["messages"] as { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
    expect(act.find((m) => m.role === "assistant")?.tool_calls?.[0]?.id).toBe("call_UP1");
    expect(act.find((m) => m.role === "tool")?.tool_call_id).toBe("call_UP1");
    const answer = upstream.received[4]!.body["messages"] as { role: string; tool_call_id?: string }[];
    expect(answer.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call_UP1", "call_UP2"]);
    expect(upstream.received[0]!.body["stream"]).toBe(true);
  });

  it("hands the client tool call ids of modelstub's own, and the upstream's failures as the same HTTP statuses", () => {
    expect(recorded).toHaveLength(6);
    const first = recorded[0] as { chunks: { choices: { delta: { tool_calls?: { id?: string }[] } }[] }[] };
    expect(first.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).find((t) => t.id)?.id).toBe("call-default-1-0");
    expect(recorded[1]).toEqual({ error: { status: 429, message: "429 Rate limit reached for requests", retryAfter: "1" } });
    expect((recorded[3] as { error: { status: number } }).error.status).toBe(503);
  });

  it("writes a script that validates, keyed by step, with comments, and without the key or the redacted names", () => {
    const compiled = loadScriptText(script, "recorded.yaml");
    expect([...compiled.lists.keys()]).toEqual(["", "plan", "act"]);
    expect(compiled.lists.get("act")!.entries).toHaveLength(4);
    expect(script).toContain("# call 2 (Generate, step act) -> ");
    expect(script).toMatch(
      /code: RESOURCE_EXHAUSTED\n\s+message: Rate limit reached for requests\n\s+trailers: \{ retry-after: "1", retry-after-ms: "1000" \}/,
    );
    expect(script).toContain("The server is overloaded (key [redacted])");
    expect(script).not.toMatch(/sk-test-SECRET|api_key|x-secret-header|k-123|call_UP/);
    expect(script).toMatch(/chunks:\n\s+- "Both files "\n\s+- look \{fine\}\./);
    // The observed latency, declared: a stream's first byte and per-chunk wait, a unary call's whole time.
    expect(script).toMatch(/- latency: \{ first_byte: \d+ms, per_chunk: \d+ms \}\n\s+reply:\n\s+text: Let me look at a.md./);
  });

  it("replays to exactly what the client saw, with the same episode bytes every time, and from-episode reproduces them", async () => {
    const first = await replay(script);
    expect(first.seen).toEqual(recorded);
    const second = await replay(script);
    expect(second.seen).toEqual(recorded);
    expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).toBe(true);
    expect(fromBinary(EpisodeSchema, first.bytes).calls).toHaveLength(6);

    const made = scriptFromEpisode(fromBinary(EpisodeSchema, first.bytes), "default.episode.binpb");
    expect(made.problems).toEqual([]);
    const third = await replay(made.text);
    expect(Buffer.from(third.bytes).equals(Buffer.from(first.bytes))).toBe(true);
  });
});
