import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/modelstub/v1/model_pb.js";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

/*
 * Issue 32, item 1: the Vercel AI SDK's default paths, each a tool loop of two model calls,
 * driven by generateText and by streamText: the Anthropic provider (a non-streamed text block
 * with `citations: null` failed its schema), the OpenAI provider's default model (Responses,
 * `store` left at true: step 2 refers to step 1's message by an item_reference) and its chat model.
 */

const script = `
steps:
  loop:
    - reply:
        text: "Let me check."
        tool_calls: [{ name: get_weather, arguments: { city: Paris } }]
    - reply: "It is 18 degrees in Paris."
`;

type Provider = "anthropic" | "openai responses" | "openai chat";

describe("the Vercel AI SDK on its default paths", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  /** The provider's model on its defaults but the base URL, its calls in `session`. */
  function model(provider: Provider, session: string): LanguageModel {
    const headers = { "x-modelstub-session": session, "x-modelstub-step": "loop" };
    if (provider === "anthropic") return createAnthropic({ baseURL: `${h.base}/v1`, apiKey: "unused", headers })("claude-sonnet-4-5");
    const openai = createOpenAI({ baseURL: `${h.base}/v1`, apiKey: "unused", headers });
    return provider === "openai chat" ? openai.chat("gpt-4o") : openai("gpt-4o");
  }

  const cities: string[] = [];
  const tools = {
    get_weather: tool({
      description: "The weather in a city",
      inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
      execute: async ({ city }) => {
        cities.push(city);
        return { city, degrees: 18 };
      },
    }),
  };
  const prompt = "What is the weather in Paris?";

  for (const provider of ["anthropic", "openai responses", "openai chat"] as const) {
    for (const mode of ["generateText", "streamText"] as const) {
      it(`runs a tool loop through ${provider} with ${mode}: the tool runs once, and step 2 sends step 1's text, call and result back`, async () => {
        const session = `${provider.replace(" ", "-")}-${mode}`;
        cities.length = 0;
        const options = { model: model(provider, session), tools, prompt, stopWhen: stepCountIs(3), maxRetries: 0 };
        const result = mode === "generateText" ? await generateText(options) : streamText(options);
        expect(await result.text).toBe("It is 18 degrees in Paris.");
        expect((await result.steps).map((s) => s.toolCalls.map((c) => [c.toolName, c.input]))).toEqual([[["get_weather", { city: "Paris" }]], []]);
        expect(cities).toEqual(["Paris"]);
        // What the model saw on step 2: the assistant turn of step 1 whole, and the tool's result.
        const calls = h.stub.episode(session).calls;
        expect(calls).toHaveLength(2);
        const second = calls[1]!.request!.messages;
        const assistant = second.find((m) => m.role === Role.ASSISTANT);
        expect([assistant?.content, assistant?.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])]).toEqual([
          "Let me check.",
          [["get_weather", { city: "Paris" }]],
        ]);
        expect(JSON.parse(second.find((m) => m.role === Role.TOOL)?.content ?? "null")).toMatchObject({ city: "Paris", degrees: 18 });
      });
    }
  }

  it("refuses an item_reference this session was not answered with: 400 naming the id", async () => {
    const headers = { "x-modelstub-session": "references" };
    const unknown = await rawRequest(
      h.base,
      "POST",
      "/v1/responses",
      {
        model: "m",
        input: [
          { role: "user", content: "hi" },
          { type: "item_reference", id: "msg_gen-elsewhere-1" },
        ],
      },
      headers,
    );
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body.toString()).error).toMatchObject({
      param: "input[1].id",
      message: expect.stringMatching(/^input\[1\]\.id: no message item "msg_gen-elsewhere-1" in this session's episode; /),
    });
    // Nor one of a call this session has not made yet.
    const ahead = await rawRequest(h.base, "POST", "/v1/responses", { model: "m", input: [{ type: "item_reference", id: "msg_gen-references-7" }] }, headers);
    expect(ahead.status).toBe(400);
    expect(h.stub.episode("references").calls).toHaveLength(0);
  });
});
