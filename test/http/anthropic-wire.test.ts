import { toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { rawRequest, startHttpStub, type RawExchange } from "./http-stub.js";

const script = `
entries:
  - latency: { first_byte: 1500ms, per_chunk: 200ms }
    reply:
      text: "Let me look."
      chunking: { chars: 5 }
      tool_calls:
        - name: read
          arguments: { path: "/etc/hosts" }
        - name: list
          arguments: {}
      usage: { input_tokens: 12, output_tokens: 9 }
  - reply: "Done."
  - error: { code: RESOURCE_EXHAUSTED, message: "quota", trailers: { retry-after: "2" } }
  - reply: "cut short"
    break: { after_chunks: 1, then: error, error: { code: INTERNAL, message: "boom" } }
  - reply: ""
`;

const ask = (text: string, extra: object = {}) => ({ model: "claude-stub", max_tokens: 64, messages: [{ role: "user", content: text }], ...extra });

/** One SSE event as Anthropic writes it: named, then its JSON. */
const ev = (type: string, body: object) => `event: ${type}\ndata: ${JSON.stringify(body)}\n\n`;

const zeroUsage = {
  input_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: null,
  server_tool_use: null,
  service_tier: "standard",
  inference_geo: null,
  speed: null,
};
const message = (id: string) => ({
  id,
  type: "message",
  role: "assistant",
  model: "claude-stub",
  content: [],
  stop_reason: null,
  stop_sequence: null,
  stop_details: null,
  container: null,
  diagnostics: null,
  usage: zeroUsage,
});
const start = (id: string) => ev("message_start", { type: "message_start", message: message(id) }) + ev("ping", { type: "ping" });
const textStart = ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
const toolStart = (index: number, id: string, name: string) =>
  ev("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {}, caller: { type: "direct" } } });
const messageDelta = (stopReason: string, input: number, output: number) =>
  ev("message_delta", {
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null, stop_details: null, container: null },
    usage: {
      input_tokens: input,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: output,
      output_tokens_details: null,
      server_tool_use: null,
    },
  });
const delta = (index: number, d: object) => ev("content_block_delta", { type: "content_block_delta", index, delta: d });
const stop = (index: number) => ev("content_block_stop", { type: "content_block_stop", index });

/** One scripted run over raw HTTP, and the session's episode bytes. */
async function run(): Promise<{ exchanges: RawExchange[]; episode: Uint8Array }> {
  const h = await startHttpStub(script);
  try {
    const s = { "x-modelstub-session": "bytes" };
    const exchanges = [
      await rawRequest(h.base, "POST", "/v1/messages", ask("one", { stream: true }), s),
      await rawRequest(h.base, "POST", "/v1/messages", ask("two", { temperature: 0.5 }), s),
      await rawRequest(h.base, "POST", "/v1/messages", ask("three", { stream: true }), s),
      await rawRequest(h.base, "POST", "/v1/messages", ask("four", { stream: true }), s),
      await rawRequest(h.base, "POST", "/v1/messages", ask("five", { stream: true }), s),
      await rawRequest(h.base, "POST", "/v1/messages", { model: "m", messages: [] }, s),
    ];
    return { exchanges, episode: toBinary(EpisodeSchema, h.stub.episode("bytes")) };
  } finally {
    await h.close();
  }
}

describe("Anthropic Messages on the wire", () => {
  it("streams one event per engine frame, in Anthropic's order: blocks opened, filled and closed, then message_delta and message_stop", async () => {
    const [tools] = (await run()).exchanges;
    expect(tools!.status).toBe(200);
    expect(tools!.headers.slice(0, 2)).toEqual([
      ["content-type", "text/event-stream; charset=utf-8"],
      ["cache-control", "no-cache"],
    ]);
    expect(String(tools!.body)).toBe(
      start("msg_gen-bytes-1") +
        textStart +
        // The script's chunking ({chars: 5}), one delta per chunk.
        delta(0, { type: "text_delta", text: "Let m" }) +
        delta(0, { type: "text_delta", text: "e loo" }) +
        delta(0, { type: "text_delta", text: "k." }) +
        stop(0) +
        toolStart(1, "call-bytes-1-0", "read") +
        delta(1, { type: "input_json_delta", partial_json: '{"pat' }) +
        delta(1, { type: "input_json_delta", partial_json: 'h":"/' }) +
        delta(1, { type: "input_json_delta", partial_json: "etc/h" }) +
        delta(1, { type: "input_json_delta", partial_json: 'osts"' }) +
        delta(1, { type: "input_json_delta", partial_json: "}" }) +
        stop(1) +
        toolStart(2, "call-bytes-1-1", "list") +
        delta(2, { type: "input_json_delta", partial_json: "{}" }) +
        stop(2) +
        messageDelta("tool_use", 12, 9) +
        ev("message_stop", { type: "message_stop" }),
    );
  });

  it("ends a stream broken by an error with Anthropic's error event and no message_stop", async () => {
    const broken = (await run()).exchanges[3]!;
    expect(String(broken.body)).toBe(
      start("msg_gen-bytes-4") +
        textStart +
        delta(0, { type: "text_delta", text: "cut " }) +
        ev("error", { type: "error", error: { type: "api_error", message: "boom" }, request_id: "req_gen-bytes-4" }),
    );
  });

  it("streams an empty reply as a message without content blocks", async () => {
    const empty = (await run()).exchanges[4]!;
    expect(String(empty.body)).toBe(start("msg_gen-bytes-5") + messageDelta("end_turn", 1, 0) + ev("message_stop", { type: "message_stop" }));
  });

  it("is byte-identical across two fresh servers: statuses, headers, bodies, SSE streams and the episode", async () => {
    const first = await run();
    const second = await run();
    expect(second.exchanges.map((x) => [x.status, x.headers])).toEqual(first.exchanges.map((x) => [x.status, x.headers]));
    first.exchanges.forEach((x, i) => {
      expect(second.exchanges[i]!.body.equals(x.body), `exchange ${i}`).toBe(true);
    });
    expect(first.exchanges.map((x) => x.status)).toEqual([200, 200, 429, 200, 200, 400]);
    expect(Buffer.from(second.episode).equals(Buffer.from(first.episode))).toBe(true);
    expect(first.exchanges[2]!.headers.filter(([k]) => k.startsWith("retry-after"))).toEqual([
      ["retry-after-ms", "2000"],
      ["retry-after", "2"],
    ]);
    expect(JSON.parse(String(first.exchanges[1]!.body))).toMatchObject({
      id: "msg_gen-bytes-2",
      content: [{ type: "text", text: "Done." }],
      stop_reason: "end_turn",
    });
  });
});
