import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import { startHttpStub, type HttpStub } from "./http-stub.js";

const script = `
models:
  - { id: stub-large, name: Stub Large, owned_by: acme, context_length: 64000 }
  - { id: stub-vision, input_modalities: [text, image], output_modalities: [text] }
entries:
  - name: hello
    match: { contains: hello }
    repeat: true
    reply: { text: "Hello there, friend.", usage: { input_tokens: 7, output_tokens: 4 } }
  - name: tools
    match: { contains: tools }
    repeat: true
    reply:
      text: "Let me look."
      chunking: { chars: 5 }
      tool_calls:
        - name: bash
          arguments: { command: "ls -la /tmp" }
        - name: read
          arguments: '{"path":"/etc/hosts"}'
steps:
  retry:
    - error: { code: RESOURCE_EXHAUSTED, message: "slow down", trailers: { retry-after-ms: "40" } }
    - reply: "worth the wait"
  retry-hinted:
    # Both hints, far apart, and apart from the SDK's own first backoff (0.375 to 0.5 s): an SDK
    # that honours retry-after-ms comes back after 600 ms, later than its own backoff would; one
    # that read retry-after (an hour) would outlast the test.
    - error: { code: RESOURCE_EXHAUSTED, message: "slow down", trailers: { retry-after-ms: "600", retry-after: "3600" } }
    - reply: "worth the wait"
  broken:
    - reply: "one two three four"
      break: { after_chunks: 2, then: error, error: { code: UNAVAILABLE, message: "the link broke" } }
  dropped:
    - reply: "one two three four"
      break: { after_chunks: 2, then: drop }
  hang:
    - hang: true
  timeout:
    - timeout: true
`;

describe("the HTTP front with the official openai client", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it("answers a non-streaming call with the scripted text, a derived id, the timeline's created, the usage and OpenRouter's provider fields", async () => {
    const {
      data: c,
      response,
      request_id,
    } = await h
      .client({ session: "unary" })
      .chat.completions.create({ model: "stub-large", messages: [{ role: "user", content: "hello" }] })
      .withResponse();
    expect(response.headers.get("x-generation-id")).toBe("chatcmpl-gen-unary-1");
    expect(request_id).toBe("req_gen-unary-1");
    expect(c).toEqual({
      id: "chatcmpl-gen-unary-1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "stub-large",
      provider: "modelstub",
      system_fingerprint: "fp_modelstub",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hello there, friend.", refusal: null },
          logprobs: null,
          finish_reason: "stop",
          native_finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 },
    });
  });

  it("streams tool calls that the SDK reassembles into the same calls as the unary reply", async () => {
    const client = h.client({ session: "tools" });
    const unary = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "tools please" }] });
    const stream = client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "tools please" }] });
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls!.map((c) => (c.type === "function" ? [c.id, c.function.name, c.function.arguments] : []));
    expect(calls).toEqual([
      ["call-tools-2-0", "bash", '{"command":"ls -la /tmp"}'],
      ["call-tools-2-1", "read", '{"path":"/etc/hosts"}'],
    ]);
    expect(final.choices[0]!.message.content).toBe("Let me look.");
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
    expect(unary.choices[0]!.message.tool_calls!.map((c) => (c.type === "function" ? c.function.arguments : ""))).toEqual([
      '{"command":"ls -la /tmp"}',
      '{"path":"/etc/hosts"}',
    ]);
  });

  it("sends a final usage chunk with empty choices when include_usage is set, and usage null before it", async () => {
    const stream = await h.client({ session: "usage" }).chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hello" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.choices.length === 1)).toBe(true);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello there, friend.");
    expect(chunks[chunks.length - 2]!.choices[0]!.finish_reason).toBe("stop");
  });

  it("lets the SDK retry a scripted 429 after retry-after-ms, not retry-after nor its own backoff, and succeed on the next entry", async () => {
    const client = h.client({ session: "retry", step: "retry-hinted", maxRetries: 2 });
    const before = h.logs.length;
    const c = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] });
    expect(c.choices[0]!.message.content).toBe("worth the wait");
    expect(h.logs.slice(before).map((l) => l.status)).toEqual([429, 200]);
    // The clock is virtual, so each request ends as it arrives: the gap is the SDK's wait, at
    // least the 600 ms of retry-after-ms (its own backoff waits 500 ms at most). A lower bound
    // only: a loaded machine makes the gap longer, never shorter.
    const gap = h.loggedAt[before + 1]! - h.loggedAt[before]!;
    expect(gap).toBeGreaterThanOrEqual(598);
    expect(h.stub.episode("retry").calls.map((x) => x.outcome)).toEqual([Outcome.ERROR, Outcome.OK]);
  });

  it("answers a 429 to a client that does not retry, with both retry headers and OpenAI's error body", async () => {
    const err = await h
      .client({ session: "no-retry", step: "retry" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.status).toBe(429);
    expect(e.headers.get("retry-after-ms")).toBe("40");
    expect(e.headers.get("retry-after")).toBe("1");
    expect(e.error).toEqual({ message: "slow down", type: "requests", param: null, code: "rate_limit_exceeded" });
  });

  it("ends a stream broken by a scripted error with an error event the SDK throws, after the chunks before it", async () => {
    const stream = await h
      .client({ session: "broken", step: "broken" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }], stream: true });
    const text: string[] = [];
    const err = await (async () => {
      for await (const c of stream) text.push(c.choices[0]?.delta.content ?? "");
    })().catch((e: unknown) => e);
    expect(text.join("")).toBe("one two ");
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toEqual({ message: "the link broke", type: "server_error", param: null, code: "unavailable" });
    expect(h.stub.episode("broken").calls[0]!.streamBreak).toBe(StreamBreak.ERROR);
  });

  it("cuts a dropped stream's connection mid-SSE: the SDK fails after the chunks before the drop", async () => {
    const stream = await h
      .client({ session: "dropped", step: "dropped" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }], stream: true });
    const text: string[] = [];
    const err = await (async () => {
      for await (const c of stream) text.push(c.choices[0]?.delta.content ?? "");
    })().catch((e: unknown) => e);
    expect(text.join("")).toBe("one two ");
    expect(err).toBeInstanceOf(Error);
    expect(h.stub.episode("dropped").calls[0]!.streamBreak).toBe(StreamBreak.DROP);
  });

  it("keeps a hang open until the client goes away, then records the call as cancelled", async () => {
    const controller = new AbortController();
    const call = h
      .client({ session: "hang", step: "hang" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] }, { signal: controller.signal })
      .catch((e: unknown) => e);
    // The server holds the call: it runs, and nothing is recorded while it hangs.
    await expect.poll(() => h.stub.inFlight()).toBe(1);
    expect(h.stub.episode("hang").calls).toHaveLength(0);
    controller.abort();
    expect(await call).toBeInstanceOf(OpenAI.APIUserAbortError);
    await expect.poll(() => h.stub.episode("hang").calls.map((c) => c.outcome)).toEqual([Outcome.CANCELLED]);
    // Nothing of the call is left running once its client has gone.
    expect(h.stub.inFlight()).toBe(0);
  });

  it("answers a scripted timeout with 408 in OpenAI's shape", async () => {
    const err = await h
      .client({ session: "timeout", step: "timeout" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(408);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: "timeout", code: "timeout" });
  });

  it("lists the script's models in OpenAI's shape and retrieves one", async () => {
    const client = h.client();
    const page = await client.models.list();
    expect(page.data).toEqual([
      { id: "stub-large", object: "model", created: 1_700_000_000, owned_by: "acme" },
      { id: "stub-vision", object: "model", created: 1_700_000_000, owned_by: "modelstub" },
    ]);
    expect(await client.models.retrieve("stub-vision")).toEqual({ id: "stub-vision", object: "model", created: 1_700_000_000, owned_by: "modelstub" });
    await expect(client.models.retrieve("nope")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("logs one record per request with method, path, status, session, entry, the call's sequence, the model and what the user said", async () => {
    const before = h.logs.length;
    await h.client({ session: "logged" }).chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello" }] });
    await expect.poll(() => h.logs.length).toBe(before + 1);
    expect(h.logs[before]).toEqual({
      method: "POST",
      path: "/v1/chat/completions",
      status: 200,
      session: "logged",
      step: "",
      entry: "entries[0]",
      entryName: "hello",
      sequence: 1,
      model: "m",
      lastUser: "hello",
      outcome: "OK",
      code: "OK",
      declaredMs: 0,
    });
  });
});
