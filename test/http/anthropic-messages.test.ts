// Longer than 250 lines because it drives the official @anthropic-ai/sdk through every
// behaviour of /v1/messages: unary, streamed, tool loops, scripted errors and the SDK's retries.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

const anthropicScript = `
entries:
  - name: hello
    match: { contains: hello }
    repeat: true
    reply: { text: "Hello there, friend.", usage: { input_tokens: 7, output_tokens: 4 } }
  # Before "tools": the second call of the loop still has "tools" in its last user text.
  - name: result
    match: { tool_result: read }
    repeat: true
    reply: "The file says: {{last_tool_result}}"
  - name: tools
    match: { contains: tools }
    repeat: true
    reply:
      text: "Let me look."
      chunking: { chars: 5 }
      tool_calls:
        - name: read
          arguments: { path: "/etc/hosts" }
      usage: { input_tokens: 12, output_tokens: 9 }
  - name: only-tools
    match: { contains: quietly }
    repeat: true
    reply:
      tool_calls:
        - name: read
          arguments: { path: "a" }
        - name: read
          arguments: '["a", "b"]'
steps:
  retry:
    - error: { code: RESOURCE_EXHAUSTED, message: "slow down", trailers: { retry-after: "1" } }
    - reply: "worth the wait"
  refused:
    - error: { code: INVALID_ARGUMENT, message: "scripted refusal" }
    - reply: "never reached"
  overloaded:
    - error: { code: UNAVAILABLE, message: "busy" }
    - reply: "back again"
  broken:
    - reply: "one two three four"
      break: { after_chunks: 2, then: error, error: { code: UNAVAILABLE, message: "the link broke" } }
`;

const read: Anthropic.Tool = {
  name: "read",
  description: "Reads a file.",
  input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

function client(h: HttpStub, session: string, o: { step?: string; maxRetries?: number } = {}): Anthropic {
  const headers: Record<string, string> = { "x-modelstub-session": session };
  if (o.step) headers["x-modelstub-step"] = o.step;
  return new Anthropic({ baseURL: h.base, apiKey: "x", maxRetries: o.maxRetries ?? 0, defaultHeaders: headers });
}

const ask = (text: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model: "claude-stub",
  max_tokens: 256,
  messages: [{ role: "user", content: text }],
  tools: [read],
});

/** Anthropic's usage for scripted counts, as modelstub sends it unary and a stream reassembles it. */
const usage = (input: number, output: number) => ({
  input_tokens: input,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
  output_tokens: output,
  output_tokens_details: null,
  server_tool_use: null,
  service_tier: "standard",
  inference_geo: null,
  speed: null,
});

/** Content blocks with every key the SDK's types declare as always present. */
const text = (t: string) => ({ type: "text", text: t });
const toolUse = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input, caller: { type: "direct" } });
/** An error body of a call that ran: named by its request id, as the request-id header names it. */
const errorBody = (type: string, message: string, requestId: string) => ({ type: "error", error: { type, message }, request_id: requestId });

describe("POST /v1/messages with the official @anthropic-ai/sdk", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(anthropicScript);
  });
  afterAll(() => h.close());

  it("answers a text reply with a message of one text block, end_turn, the scripted usage and a request id", async () => {
    const m = await client(h, "unary").messages.create(ask("hello"));
    expect(m._request_id).toBe("req_gen-unary-1");
    expect(m).toEqual({
      id: "msg_gen-unary-1",
      type: "message",
      role: "assistant",
      model: "claude-stub",
      content: [text("Hello there, friend.")],
      stop_reason: "end_turn",
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: usage(7, 4),
    });
  });

  it("answers a tool-calling turn with its text, then a tool_use block, and stop_reason tool_use", async () => {
    const m = await client(h, "tool-turn").messages.create(ask("tools please"));
    expect(m.content).toEqual([text("Let me look."), toolUse("call-tool-turn-1-0", "read", { path: "/etc/hosts" })]);
    expect([m.stop_reason, m.usage.input_tokens, m.usage.output_tokens]).toEqual(["tool_use", 12, 9]);
  });

  it("answers a tool-only turn with tool_use blocks alone, arguments that are a JSON list as that list", async () => {
    const m = await client(h, "tool-only").messages.create(ask("quietly"));
    expect(m.content).toEqual([toolUse("call-tool-only-1-0", "read", { path: "a" }), toolUse("call-tool-only-1-1", "read", ["a", "b"])]);
    expect(m.stop_reason).toBe("tool_use");
  });

  it("runs a whole tool loop unary: the tool_result sent back reaches the script's tool_result matcher and template", async () => {
    const c = client(h, "loop-unary");
    const first = await c.messages.create(ask("tools please"));
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
    const second = await c.messages.create({
      ...ask("tools please"),
      messages: [
        { role: "user", content: "tools please" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "127.0.0.1 localhost" }] },
      ],
    });
    expect(second.content).toEqual([text("The file says: 127.0.0.1 localhost")]);
    expect(second.stop_reason).toBe("end_turn");
    expect(h.stub.episode("loop-unary").calls.map((x) => x.entry)).toEqual(["entries[2]", "entries[1]"]);
  });

  it("runs the same tool loop streaming, with the SDK reassembling each turn", async () => {
    const c = client(h, "loop-stream");
    const first = await c.messages.stream(ask("tools please")).finalMessage();
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
    expect([call.id, call.name, call.input]).toEqual(["call-loop-stream-1-0", "read", { path: "/etc/hosts" }]);
    const second = await c.messages
      .stream({
        ...ask("tools please"),
        messages: [
          { role: "user", content: "tools please" },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: [{ type: "text", text: "127.0.0.1 localhost" }] }] },
        ],
      })
      .finalMessage();
    expect(second.content).toEqual([text("The file says: 127.0.0.1 localhost")]);
    expect(h.stub.episode("loop-stream").calls.map((x) => [x.entry, x.outcome])).toEqual([
      ["entries[2]", Outcome.OK],
      ["entries[1]", Outcome.OK],
    ]);
  });

  it("reassembles a stream into the very message unary answers for the same entry, usage included", async () => {
    // Two fresh servers, the same session name: the same ids, so the messages can be equal whole.
    const other = await startHttpStub(anthropicScript);
    try {
      for (const said of ["tools please", "hello", "quietly"]) {
        const session = `same-${said.split(" ")[0]}`;
        const unary = await client(h, session).messages.create(ask(said));
        // parsed_output is the SDK's own (structured outputs), added to every streamed message.
        const { parsed_output, ...streamed } = await client(other, session).messages.stream(ask(said)).finalMessage();
        expect(parsed_output).toBeNull();
        // Strictly: no key one has that the other lacks, not even one holding undefined.
        expect({ ...streamed }, said).toStrictEqual({ ...unary });
      }
    } finally {
      await other.close();
    }
  });

  it("lets the SDK retry a scripted 429 with retry-after, and succeed on the next entry", async () => {
    const before = h.logs.length;
    const m = await client(h, "retry", { step: "retry", maxRetries: 1 }).messages.create(ask("go"));
    expect(m.content).toEqual([text("worth the wait")]);
    expect(h.logs.slice(before).map((l) => l.status)).toEqual([429, 200]);
    expect(h.stub.episode("retry").calls.map((x) => x.outcome)).toEqual([Outcome.ERROR, Outcome.OK]);
  });

  it("answers a 429 in Anthropic's shape with both retry headers", async () => {
    const err = await client(h, "no-retry", { step: "retry" })
      .messages.create(ask("go"))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    const e = err as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.error).toEqual(errorBody("rate_limit_error", "slow down", "req_gen-no-retry-1"));
    expect(e.requestID).toBe("req_gen-no-retry-1");
    expect([e.headers?.get("retry-after"), e.headers?.get("retry-after-ms")]).toEqual(["1", "1000"]);
  });

  it("does not retry a scripted 400: the SDK throws invalid_request_error after one request", async () => {
    const before = h.logs.length;
    const err = await client(h, "refused", { step: "refused", maxRetries: 2 })
      .messages.create(ask("go"))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual(errorBody("invalid_request_error", "scripted refusal", "req_gen-refused-1"));
    expect(h.logs.slice(before).map((l) => l.status)).toEqual([400]);
  });

  it("answers UNAVAILABLE with Anthropic's 529 overloaded_error, which the SDK retries", async () => {
    const err = await client(h, "overloaded-once", { step: "overloaded" })
      .messages.create(ask("go"))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    const e = err as InstanceType<typeof Anthropic.InternalServerError>;
    expect([e.status, e.error]).toEqual([529, errorBody("overloaded_error", "busy", "req_gen-overloaded-once-1")]);
    const m = await client(h, "overloaded-retried", { step: "overloaded", maxRetries: 1 }).messages.create(ask("go"));
    expect(m.content).toEqual([text("back again")]);
  });

  it("ends a stream broken by a scripted error with an error event the SDK throws, after the text before it", async () => {
    const stream = client(h, "broken", { step: "broken" }).messages.stream(ask("go"));
    const seen: string[] = [];
    stream.on("text", (t) => seen.push(t));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(seen.join("")).toBe("one two ");
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual(errorBody("overloaded_error", "the link broke", "req_gen-broken-1"));
    expect(h.stub.episode("broken").calls[0]!.streamBreak).toBe(StreamBreak.ERROR);
  });

  it("refuses a request the SDK sends with an image block, naming the field, without retrying", async () => {
    const before = h.logs.length;
    const err = await client(h, "image", { maxRetries: 2 })
      .messages.create({
        model: "m",
        max_tokens: 10,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "look" },
              { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
            ],
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/^messages\[0\]\.content\[1\]\.type: modelstub reads text and tool_result blocks in a user turn, not "image"/);
    expect(h.logs.slice(before).map((l) => [l.status, l.outcome])).toEqual([[400, "REFUSED"]]);
    expect(h.stub.episode("image").calls).toHaveLength(0);
  });

  it("shapes the front's own errors on /v1/messages as Anthropic does", async () => {
    const r = await rawRequest(h.base, "GET", "/v1/messages");
    expect(r.status).toBe(405);
    expect(JSON.parse(String(r.body))).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    // Refused before routing too: a session name outside the grammar.
    const bad = await rawRequest(h.base, "POST", "/v1/messages", ask("hello"), { "x-modelstub-session": "no spaces allowed" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(String(bad.body))).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });
});
