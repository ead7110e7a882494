import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

const script = `
models:
  - { id: stub-large, name: Stub Large, context_length: 64000, prompt_price: "0.000001" }
  - { id: stub-painter, output_modalities: [image] }
entries:
  # A model the script does not list is refused as OpenAI refuses one: 404.
  - match: { unknown_model: true }
    repeat: true
    error: { code: NOT_FOUND, message: "The model does not exist or you do not have access to it." }
  - match: { contains: hello }
    repeat: true
    reply: "Hi there."
  - match: { contains: weather }
    repeat: true
    reply: { tool_calls: [{ name: get_weather, arguments: { city: Paris } }] }
`;

type CatalogModel = { id: string; context_length: number; architecture: { output_modalities: string[] }; pricing: { prompt: string } };

describe("the OpenRouter dialect, as its harnesses call it", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it("serves the catalog at <base>/models?output_modalities=all when the base URL ends in /v1", async () => {
    const client = new OpenAI({ baseURL: `${h.base}/v1`, apiKey: "unused", maxRetries: 0 });
    const page = await client.models.list({ query: { output_modalities: "all" } });
    const models = page.data as unknown as CatalogModel[];
    expect(models.map((m) => [m.id, m.context_length, m.pricing.prompt])).toEqual([
      ["stub-large", 64000, "0.000001"],
      ["stub-painter", 0, "0"],
    ]);
    const images = (await client.models.list({ query: { output_modalities: "image" } })).data as unknown as CatalogModel[];
    expect(images.map((m) => m.id)).toEqual(["stub-painter"]);
    // Without OpenRouter's parameter, the OpenAI list it always was.
    expect((await client.models.list()).data.map((m) => [m.id, m.object])).toEqual([
      ["stub-large", "model"],
      ["stub-painter", "model"],
    ]);
  });

  it("serves a client given OpenRouter's own base URL, /api/v1 with only the host changed: chat, Responses, the catalog and one model", async () => {
    const client = new OpenAI({ baseURL: `${h.base}/api/v1`, apiKey: "unused", maxRetries: 0 });
    const chat = await client.chat.completions.create({ model: "stub-large", messages: [{ role: "user", content: "hello" }] });
    expect(chat.choices[0]?.message.content).toBe("Hi there.");
    const streamed = await client.chat.completions.stream({ model: "stub-large", messages: [{ role: "user", content: "hello" }] }).finalChatCompletion();
    expect(streamed.choices[0]?.message.content).toBe("Hi there.");
    expect((await client.responses.create({ model: "stub-large", input: "hello" })).output_text).toBe("Hi there.");
    // OpenRouter's <base>/models is its catalog, as at the host root.
    const models = (await client.models.list()).data as unknown as CatalogModel[];
    expect(models.map((m) => [m.id, m.context_length])).toEqual([
      ["stub-large", 64000],
      ["stub-painter", 0],
    ]);
    expect(await client.models.retrieve("stub-large")).toMatchObject({ id: "stub-large", object: "model" });
    // A path under it that is no route is a 404 naming the path as sent.
    const missing = await rawRequest(h.base, "GET", "/api/v1/audio/speech");
    expect([missing.status, JSON.parse(missing.body.toString()).error.message]).toEqual([
      404,
      expect.stringMatching(/^no route GET \/api\/v1\/audio\/speech; /),
    ]);
  });

  it("retrieves one model under either base URL: .../v1 or the host root", async () => {
    for (const baseURL of [`${h.base}/v1`, h.base]) {
      const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
      expect(await client.models.retrieve("stub-large")).toMatchObject({ id: "stub-large", object: "model" });
      await expect(client.models.retrieve("no-such-model")).rejects.toMatchObject({ status: 404 });
    }
  });

  it("streams a turn that only calls tools with null content, so the reassembled answer is the unary one", async () => {
    const client = h.client();
    const body = { model: "stub-large", messages: [{ role: "user" as const, content: "weather in Paris?" }] };
    const unary = await client.chat.completions.create(body);
    const streamed = await client.chat.completions.stream(body).finalChatCompletion();
    expect(unary.choices[0]!.message.content).toBeNull();
    expect(streamed.choices[0]!.message.content).toBeNull();
    // The same call, its id apart (ids carry the call's sequence in the session).
    const calls = (c: OpenAI.ChatCompletion) =>
      c.choices[0]!.message.tool_calls!.map((t) => (t.type === "function" ? [t.function.name, t.function.arguments] : [t.type]));
    expect(calls(streamed)).toEqual(calls(unary));
    expect(calls(unary)).toEqual([["get_weather", '{"city":"Paris"}']]);
    const raw = await client.chat.completions.create({ ...body, stream: true });
    const first: unknown[] = [];
    for await (const chunk of raw) first.push(chunk.choices[0]?.delta);
    expect(first[0]).toEqual({ role: "assistant", content: null });
  });

  it("answers a model the script does not list with a scripted 404, and a listed one as usual", async () => {
    const client = h.client();
    const err = await client.chat.completions.create({ model: "gpt-nonexistent", messages: [{ role: "user", content: "hello" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).message).toContain("The model does not exist");
    const ok = await client.chat.completions.create({ model: "stub-painter", messages: [{ role: "user", content: "hello" }] });
    expect(ok.choices[0]!.message.content).toBe("Hi there.");
  });

  it("names the provider and the native finish reason in every chunk, and the generation in an X-Generation-Id header", async () => {
    const r = await rawRequest(
      h.base,
      "POST",
      "/v1/chat/completions",
      { model: "stub-large", stream: true, messages: [{ role: "user", content: "hello" }] },
      { "x-modelstub-session": "gen-id" },
    );
    expect(r.headers).toContainEqual(["x-generation-id", "chatcmpl-gen-gen-id-1"]);
    const chunks = String(r.body)
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as { provider: string; choices: { finish_reason: string | null; native_finish_reason: string | null }[] });
    expect(chunks.every((c) => c.provider === "modelstub")).toBe(true);
    expect(chunks.map((c) => [c.choices[0]!.finish_reason, c.choices[0]!.native_finish_reason])).toEqual([
      [null, null],
      [null, null],
      [null, null],
      ["stop", "stop"],
    ]);
  });

  it("lists the catalog with OpenRouter's canonical_slug, hugging_face_id, supported and default parameters", async () => {
    const catalog = JSON.parse(String((await rawRequest(h.base, "GET", "/models")).body)) as { data: Record<string, unknown>[] };
    expect(catalog.data[0]).toMatchObject({
      id: "stub-large",
      canonical_slug: "stub-large",
      hugging_face_id: "",
      top_provider: { context_length: 64000, max_completion_tokens: null, is_moderated: false },
      default_parameters: { temperature: null, top_p: null, frequency_penalty: null },
    });
    expect(catalog.data[0]!["supported_parameters"]).toContain("tools");
  });
});

describe("modelstub serve --openrouter-comments", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script, { processingComments: true });
  });
  afterAll(() => h.close());

  it("begins every stream with OpenRouter's keep-alive comment line, which the SDK skips", async () => {
    const body = { model: "stub-large", messages: [{ role: "user" as const, content: "hello" }] };
    const r = await rawRequest(h.base, "POST", "/v1/chat/completions", { ...body, stream: true });
    expect(String(r.body).startsWith(": OPENROUTER PROCESSING\n\ndata: {")).toBe(true);
    expect(String(r.body).match(/^: /gm)).toHaveLength(1);
    const streamed = await h.client().chat.completions.stream(body).finalChatCompletion();
    expect(streamed.choices[0]!.message.content).toBe("Hi there.");
  });

  it("leaves unary answers as they were", async () => {
    const r = await rawRequest(h.base, "POST", "/v1/chat/completions", { model: "stub-large", messages: [{ role: "user", content: "hello" }] });
    expect(JSON.parse(String(r.body)).choices[0].message.content).toBe("Hi there.");
  });
});
