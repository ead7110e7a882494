// Longer than 250 lines because it is the Responses API's wire in two parts: the events and
// objects it writes, and the refusals of malformed requests.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, startHttpStub, type HttpStub, type RawExchange } from "./http-stub.js";

const script = `
entries:
  - latency: { first_byte: 1500ms, per_chunk: 200ms }
    reply:
      text: "Calling now."
      tool_calls:
        - name: bash
          arguments: { command: "echo hi" }
  - reply: "cut short"
    break: { after_chunks: 1, then: error }
  - error: { code: RESOURCE_EXHAUSTED, message: "quota", trailers: { retry-after: "2" } }
  - reply: "unary at the end"
  - reply: { text: "" }
`;

const stream = (input: string) => ({ model: "stub-a", input, stream: true });

/** The events of an SSE body: [event line's name, data]. */
function events(body: Buffer): [string, Record<string, unknown>][] {
  return String(body)
    .split("\n\n")
    .filter((e) => e.length > 0)
    .map((e) => {
      const m = /^event: (.+)\ndata: (.+)$/.exec(e);
      if (!m) throw new Error(`not an SSE event with a name: ${JSON.stringify(e)}`);
      return [m[1]!, JSON.parse(m[2]!)];
    });
}

/** One scripted run over raw HTTP on a fresh server: every exchange, and the episode's bytes. */
async function run(): Promise<{ out: RawExchange[]; episode: Uint8Array }> {
  const h = await startHttpStub(script);
  try {
    const s = { "x-modelstub-session": "bytes" };
    const out: RawExchange[] = [];
    out.push(await rawRequest(h.base, "POST", "/v1/responses", stream("one"), s));
    out.push(await rawRequest(h.base, "POST", "/responses", stream("two"), s));
    out.push(await rawRequest(h.base, "POST", "/v1/responses", stream("three"), s));
    out.push(await rawRequest(h.base, "POST", "/v1/responses", { input: "four", temperature: 0.5 }, s));
    out.push(await rawRequest(h.base, "POST", "/v1/responses", stream("five"), s));
    out.push(await rawRequest(h.base, "POST", "/v1/responses", "{not json", s));
    return { out, episode: h.stub.episodeBytes("bytes") };
  } finally {
    await h.close();
  }
}

describe("the Responses API's wire output", () => {
  it("is byte-identical across two fresh servers: statuses, headers, bodies, SSE streams and the episode", async () => {
    const first = await run();
    const second = await run();
    expect(first.out.map((x) => x.status)).toEqual([200, 200, 429, 200, 200, 400]);
    expect(second.out.map((x) => x.headers)).toEqual(first.out.map((x) => x.headers));
    for (let i = 0; i < first.out.length; i++) expect(second.out[i]!.body.equals(first.out[i]!.body), `exchange ${i}`).toBe(true);
    expect(Buffer.from(second.episode).equals(Buffer.from(first.episode))).toBe(true);
  });

  it("streams the exact event sequence, numbered from 0, with per-frame deltas and the whole response last", async () => {
    const { out } = await run();
    const [toolTurn, broken, , , empty] = out;
    expect(toolTurn!.headers).toContainEqual(["content-type", "text/event-stream; charset=utf-8"]);
    const got = events(toolTurn!.body);
    expect(got.map(([name, data]) => [name, data["type"], data["sequence_number"]])).toEqual(
      [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
      ].map((t, i) => [t, t, i]),
    );
    const data = got.map(([, d]) => d);
    expect(data.filter((d) => d["type"] === "response.output_text.delta").map((d) => d["delta"])).toEqual(["Calling ", "now."]);
    expect(data[9]).toEqual({
      type: "response.output_item.added",
      sequence_number: 9,
      output_index: 1,
      item: { id: "fc_gen-bytes-1_0", type: "function_call", status: "in_progress", call_id: "call-bytes-1-0", name: "bash", arguments: "" },
    });
    expect(data.filter((d) => d["type"] === "response.function_call_arguments.delta").map((d) => d["delta"])).toEqual(['{"command":"echo ', 'hi"}']);
    expect(data[12]).toMatchObject({ item_id: "fc_gen-bytes-1_0", output_index: 1, name: "bash", arguments: '{"command":"echo hi"}' });
    const completed = data[14]!["response"] as Record<string, unknown>;
    expect(completed).toMatchObject({ id: "resp_gen-bytes-1", created_at: 1_700_000_000, status: "completed" });
    expect((completed["output"] as object[]).map((o) => (o as { type: string }).type)).toEqual(["message", "function_call"]);
    // Nothing follows: the Responses API sends no [DONE].
    expect(String(toolTurn!.body).endsWith("\n\n")).toBe(true);
    expect(String(toolTurn!.body)).not.toContain("[DONE]");

    // The second call starts after the first's 1.5 s and its waits: created counts from the timeline.
    const brokenEvents = events(broken!.body);
    expect((brokenEvents[0]![1]["response"] as { created_at: number }).created_at).toBe(1_700_000_002);
    const last = brokenEvents[brokenEvents.length - 1]!;
    expect(last).toEqual([
      "error",
      {
        type: "error",
        sequence_number: brokenEvents.length - 1,
        code: "unavailable",
        message: "stream broken by the script after 1 chunks",
        param: null,
        error: { message: "stream broken by the script after 1 chunks", type: "server_error", param: null, code: "unavailable" },
      },
    ]);

    // A reply that says nothing still has its (empty) message item, as the unary answer does.
    expect(events(empty!.body).map(([name]) => name)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });

  it("answers a scripted 429 before any event with the HTTP status, both retry headers and OpenAI's error body", async () => {
    const { out } = await run();
    const limited = out[2]!;
    expect(limited.headers.filter(([k]) => k.startsWith("retry-after"))).toEqual([
      ["retry-after-ms", "2000"],
      ["retry-after", "2"],
    ]);
    expect(JSON.parse(String(limited.body))).toEqual({ error: { message: "quota", type: "requests", param: null, code: "rate_limit_exceeded" } });
  });
});

const user = { role: "user", content: "hi" };

/** [what is wrong, body, the param named, a phrase of the message, the code]. */
const corpus: [string, string | object, string | null, string, string][] = [
  ["malformed JSON", '{"input": [', null, "not valid JSON", "invalid_json"],
  ["a list for a body", "[]", null, "must be a JSON object", "invalid_type"],
  ["no input", { model: "m" }, "input", "input is required", "missing_required_parameter"],
  ["input as a number", { input: 3 }, "input", "a string or a list of items", "invalid_type"],
  ["no item at all", { input: [] }, "input", "at least one item", "invalid_value"],
  ["an item without type or role", { input: [{ content: "hi" }] }, "input[0].type", "input[0].type is required", "missing_required_parameter"],
  ["an unknown role", { input: [user, { role: "tool", content: "x" }] }, "input[1].role", "function_call_output item", "invalid_value"],
  [
    "an image part",
    { input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] },
    "input[0].content[0].type",
    "text parts only",
    "invalid_value",
  ],
  [
    "a file part",
    {
      input: [
        user,
        {
          role: "user",
          content: [
            { type: "input_text", text: "a" },
            { type: "input_file", file_id: "f" },
          ],
        },
      ],
    },
    "input[1].content[1].type",
    '"input_file"',
    "invalid_value",
  ],
  [
    "an item reference this server never answered",
    { input: [user, { type: "item_reference", id: "msg_1" }] },
    "input[1].id",
    'no message item "msg_1" in this session',
    "invalid_value",
  ],
  [
    "a web search call item",
    { input: [user, user, user, { type: "web_search_call", id: "ws", status: "completed" }] },
    "input[3].type",
    '"web_search_call"',
    "invalid_value",
  ],
  [
    "a function_call without call_id",
    { input: [user, { type: "function_call", name: "b", arguments: "{}" }] },
    "input[1].call_id",
    "call_id is required",
    "missing_required_parameter",
  ],
  [
    "function_call arguments as an object",
    { input: [user, { type: "function_call", call_id: "c", name: "b", arguments: { a: 1 } }] },
    "input[1].arguments",
    "expected a string",
    "invalid_type",
  ],
  [
    "a function_call_output without output",
    { input: [user, { type: "function_call_output", call_id: "c" }] },
    "input[1].output",
    "output is required",
    "missing_required_parameter",
  ],
  [
    "an image in a tool output",
    { input: [user, { type: "function_call_output", call_id: "c", output: [{ type: "input_image" }] }] },
    "input[1].output[0].type",
    "text parts only",
    "invalid_value",
  ],
  [
    "more items than a request may hold",
    { input: Array.from({ length: 10_001 }, () => user) },
    "input",
    "input holds 10001 items; modelstub reads at most 10000",
    "too_many_items",
  ],
  ["a built-in tool", { input: "hi", tools: [{ type: "web_search" }] }, "tools[0].type", "function tools only", "invalid_value"],
  [
    "a function tool without a name",
    { input: "hi", tools: [{ type: "function", parameters: {} }] },
    "tools[0].name",
    "tools[0].name is required",
    "missing_required_parameter",
  ],
  [
    "tool parameters as a string",
    { input: "hi", tools: [{ type: "function", name: "t", parameters: "{}" }] },
    "tools[0].parameters",
    "expected an object",
    "invalid_type",
  ],
  ["instructions as a list", { input: "hi", instructions: [user] }, "instructions", "expected a string", "invalid_type"],
  ["max_output_tokens fractional", { input: "hi", max_output_tokens: 1.5 }, "max_output_tokens", "expected a whole number", "invalid_type"],
  ["temperature as a string", { input: "hi", temperature: "hot" }, "temperature", "expected a number", "invalid_type"],
  ["stream as a string", { input: "hi", stream: "yes" }, "stream", "expected true or false", "invalid_type"],
  ["previous_response_id", { input: "hi", previous_response_id: "resp_1" }, "previous_response_id", "keeps no responses", "unsupported_parameter"],
  ["a stored conversation", { input: "hi", conversation: "conv_1" }, "conversation", "keeps no conversations", "unsupported_parameter"],
  ["background mode", { input: "hi", background: true }, "background", "never in the background", "unsupported_parameter"],
];

describe("malformed Responses requests", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub("entries: [{ reply: ok, repeat: true }]");
  });
  afterAll(() => h.close());

  it.each(corpus)("answers 400 naming the problem for %s", async (_what, body, param, phrase, code) => {
    const r = await rawRequest(h.base, "POST", "/v1/responses", body);
    expect(r.status).toBe(400);
    const { error } = JSON.parse(String(r.body));
    expect(Object.keys(error)).toEqual(["message", "type", "param", "code"]);
    expect(error).toMatchObject({ type: "invalid_request_error", param, code });
    expect(error.message).toContain(phrase);
  });

  it("records nothing for a refused request, and accepts what it ignores", async () => {
    expect(h.stub.episode("default").calls).toHaveLength(0);
    const r = await rawRequest(h.base, "POST", "/v1/responses", {
      input: [{ type: "reasoning", id: "rs_1", summary: [] }, user],
      store: false,
      include: ["reasoning.encrypted_content"],
      metadata: { run: "7" },
      tool_choice: "required",
      text: { format: { type: "text" } },
      reasoning: { effort: "low" },
      truncation: "auto",
      user: "someone",
      background: false,
      previous_response_id: null,
    });
    expect(r.status).toBe(200);
    const body = JSON.parse(String(r.body));
    expect(body).toMatchObject({ metadata: { run: "7" }, tool_choice: "required", reasoning: { effort: "low" }, truncation: "auto" });
    // As OpenAI: output_text is the SDK's convenience, derived from output, not a wire field.
    expect("output_text" in body).toBe(false);
    expect(h.stub.episode("default").calls[0]!.request!.messages.map((m) => m.content)).toEqual(["hi"]);
  });
});
