import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import { startHttpStub, type HttpStub } from "./http-stub.js";

const script = `
entries:
  - name: hello
    match: { contains: hello }
    repeat: true
    reply: { text: "Hello there, friend.", usage: { input_tokens: 7, output_tokens: 4 } }
  - name: weather-answer
    match: { contains: weather, tool_result: get_weather }
    repeat: true
    reply: "It is {{last_tool_result}} in Paris."
  - name: weather-lookup
    match: { contains: weather }
    repeat: true
    reply:
      text: "Let me check."
      tool_calls:
        - name: get_weather
          arguments: { city: "Paris", units: "metric" }
  - name: cut
    match: { contains: long }
    repeat: true
    reply: { text: "This is where it stops", finish_reason: length }
steps:
  retry:
    - error: { code: RESOURCE_EXHAUSTED, message: "slow down", trailers: { retry-after-ms: "20" } }
    - reply: "worth the wait"
  exhausted:
    - reply: "the only one"
  broken:
    - reply: "one two three four"
      break: { after_chunks: 2, then: error, error: { code: UNAVAILABLE, message: "the link broke" } }
`;

const tools: OpenAI.Responses.FunctionTool[] = [
  {
    type: "function",
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } } },
    strict: false,
  },
];

/** The fields the SDK's parse helpers add to a streamed response (all null here), for comparing it with a unary one. */
const helperFields = new Set(["output_parsed", "parsed_arguments", "parsed"]);

function withoutParsed(r: unknown): unknown {
  return JSON.parse(JSON.stringify(r), (k: string, v: unknown) => (helperFields.has(k) ? undefined : v));
}

describe("the Responses API with the official openai client", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it("answers a unary call with a completed response whose output_text is the scripted text", async () => {
    const r = await h.client({ session: "unary" }).responses.create({ model: "stub-large", instructions: "Be kind.", input: "hello" });
    expect(r.output_text).toBe("Hello there, friend.");
    expect(r).toMatchObject({
      id: "resp_gen-unary-1",
      object: "response",
      created_at: 1_700_000_000,
      status: "completed",
      error: null,
      incomplete_details: null,
      instructions: "Be kind.",
      model: "stub-large",
      output: [
        {
          id: "msg_gen-unary-1",
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Hello there, friend.", annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 7,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 4,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 11,
      },
      tools: [],
      temperature: null,
      top_p: null,
      parallel_tool_calls: true,
      tool_choice: "auto",
    });
  });

  it("answers a reply cut at its token limit as incomplete, with reason max_output_tokens, unary and streamed", async () => {
    const r = await h.client({ session: "cut" }).responses.create({ model: "m", input: "a long one", max_output_tokens: 5 });
    expect([r.status, r.incomplete_details, r.max_output_tokens, r.output_text]).toEqual([
      "incomplete",
      { reason: "max_output_tokens" },
      5,
      "This is where it stops",
    ]);
    const types: string[] = [];
    const streamed = await h
      .client({ session: "cut" })
      .responses.stream({ model: "m", input: "a long one", max_output_tokens: 5 })
      .on("event", (e) => types.push(e.type))
      .finalResponse();
    expect([streamed.status, streamed.incomplete_details, types[types.length - 1]]).toEqual([
      "incomplete",
      { reason: "max_output_tokens" },
      "response.incomplete",
    ]);
  });

  it("runs a whole tool loop unary: a function_call item, then the answer to its function_call_output", async () => {
    const client = h.client({ session: "loop-unary" });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "What is the weather?" }];
    const first = await client.responses.create({ model: "m", input, tools, store: false });
    expect(first.output_text).toBe("Let me check.");
    const call = first.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === "function_call")!;
    expect(call).toEqual({
      id: "fc_gen-loop-unary-1_0",
      type: "function_call",
      status: "completed",
      call_id: "call-loop-unary-1-0",
      name: "get_weather",
      arguments: '{"city":"Paris","units":"metric"}',
    });
    expect(first.tools).toEqual([
      { type: "function", name: "get_weather", description: "The weather in a city.", parameters: tools[0]!.parameters, strict: false },
    ]);
    // The client sends the output back, then the tool's result, as the Responses API asks.
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: "function_call_output", call_id: call.call_id, output: "18°C and sunny" });
    const second = await client.responses.create({ model: "m", input, tools, store: false });
    expect(second.output_text).toBe("It is 18°C and sunny in Paris.");
    expect(h.stub.episode("loop-unary").calls.map((c) => c.entry)).toEqual(["entries[2]", "entries[1]"]);
  });

  it("runs the same tool loop streaming, the SDK reassembling each turn", async () => {
    const client = h.client({ session: "loop-stream" });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "What is the weather?" }];
    const first = await client.responses.stream({ model: "m", input, tools }).finalResponse();
    const call = first.output.find((o) => o.type === "function_call");
    expect(call).toMatchObject({ call_id: "call-loop-stream-1-0", name: "get_weather", arguments: '{"city":"Paris","units":"metric"}' });
    input.push(
      { type: "function_call", call_id: call!.call_id, name: call!.name, arguments: call!.arguments },
      { type: "function_call_output", call_id: call!.call_id, output: [{ type: "input_text", text: "rainy" }] },
    );
    const stream = await client.responses.create({ model: "m", input, tools, stream: true });
    const deltas: string[] = [];
    for await (const e of stream) if (e.type === "response.output_text.delta") deltas.push(e.delta);
    expect(deltas.join("")).toBe("It is rainy in Paris.");
    expect(deltas.length).toBeGreaterThan(1);
  });

  it("reassembles a stream into the unary response for the same entry, and its response.completed is that response", async () => {
    const client = h.client({ session: "same" });
    for (const text of ["hello", "weather?"]) {
      const unary = await client.responses.create({ model: "m", input: text, tools });
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      const stream = client.responses.stream({ model: "m", input: text, tools }).on("event", (e) => events.push(e));
      const final = await stream.finalResponse();
      // Ids derive from the sequence, one call apart.
      const renumber = (r: unknown) =>
        JSON.parse(
          JSON.stringify(r)
            .replaceAll(/gen-same-(\d+)/g, "gen-same-N")
            .replaceAll(/call-same-(\d+)/g, "call-same-N"),
        );
      expect(renumber(withoutParsed(final))).toEqual(renumber(unary));
      const completed = events.find((e) => e.type === "response.completed");
      expect(renumber(completed && "response" in completed ? { ...completed.response, output_text: unary.output_text } : undefined)).toEqual(renumber(unary));
      expect(final.output_text).toBe(unary.output_text);
    }
  });

  it("lets the SDK retry a scripted 429 and succeed on the next entry", async () => {
    const before = h.logs.length;
    const r = await h.client({ session: "retry", step: "retry", maxRetries: 1 }).responses.create({ model: "m", input: "go" });
    expect(r.output_text).toBe("worth the wait");
    await expect
      .poll(() => h.logs.slice(before).map((l) => [l.path, l.status]))
      .toEqual([
        ["/v1/responses", 429],
        ["/v1/responses", 200],
      ]);
  });

  it("answers an exhausted list with a 400 in OpenAI's shape, which the SDK does not retry", async () => {
    const client = h.client({ session: "exhausted", step: "exhausted", maxRetries: 3 });
    await client.responses.create({ model: "m", input: "go" });
    const err = await client.responses.create({ model: "m", input: "go" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: "invalid_request_error", param: null, code: "failed_precondition" });
    expect(h.stub.episode("exhausted").calls).toHaveLength(2);
  });

  it("ends a stream broken by a scripted error with an error event the SDK throws, after the deltas before it", async () => {
    const stream = await h.client({ session: "broken", step: "broken" }).responses.create({ model: "m", input: "go", stream: true });
    const text: string[] = [];
    const err = await (async () => {
      for await (const e of stream) if (e.type === "response.output_text.delta") text.push(e.delta);
    })().catch((e: unknown) => e);
    expect(text.join("")).toBe("one two ");
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toEqual({ message: "the link broke", type: "server_error", param: null, code: "unavailable" });
    expect(h.stub.episode("broken").calls[0]!.streamBreak).toBe(StreamBreak.ERROR);
  });

  it("makes the stream helper's finalResponse() reject on a mid-stream error", async () => {
    const stream = h.client({ session: "broken-helper", step: "broken" }).responses.stream({ model: "m", input: "go" });
    await expect(stream.finalResponse()).rejects.toThrow("the link broke");
    expect(h.stub.episode("broken-helper").calls.map((c) => c.outcome)).toEqual([Outcome.STREAM_BROKEN]);
  });

  it("refuses previous_response_id with a 400 that says to send the whole conversation", async () => {
    const err = await h
      .client({ session: "prev" })
      .responses.create({ model: "m", input: "hello", previous_response_id: "resp_1" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect([e.param, e.code]).toEqual(["previous_response_id", "unsupported_parameter"]);
    expect(e.message).toContain("send the whole conversation in `input`");
    expect(h.stub.episode("prev").calls).toHaveLength(0);
  });
});
