import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpStub, type HttpStub } from "./http-stub.js";

const script = `
models:
  - { id: stub-large, name: Stub Large, context_length: 64000, prompt_price: "0.000001" }
  - { id: stub-painter, output_modalities: [image] }
entries:
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
    const calls = (c: OpenAI.ChatCompletion) => c.choices[0]!.message.tool_calls!.map((t) => (t.type === "function" ? [t.function.name, t.function.arguments] : [t.type]));
    expect(calls(streamed)).toEqual(calls(unary));
    expect(calls(unary)).toEqual([["get_weather", '{"city":"Paris"}']]);
    const raw = await client.chat.completions.create({ ...body, stream: true });
    const first: unknown[] = [];
    for await (const chunk of raw) first.push(chunk.choices[0]?.delta);
    expect(first[0]).toEqual({ role: "assistant", content: null });
  });
});
