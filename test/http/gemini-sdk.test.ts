import { ApiError, GoogleGenAI, type Content, type FunctionDeclaration, type GenerateContentResponse } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/modelstub/v1/model_pb.js";
import { startHttpStub, type HttpStub } from "./http-stub.js";

/*
 * Issue 32, item 2: Google's own SDK, @google/genai, on its default path (the Gemini Developer
 * API, v1beta, only the base URL changed) against a real server: a tool loop through
 * generateContent and through generateContentStream, the model list, and errors as ApiError.
 */

const script = `
models:
  - { id: gemini-stub, name: Gemini Stub, context_length: 32000 }
entries:
  - name: limit
    match: { contains: "write a lot" }
    repeat: true
    reply: { text: "Once upon", finish_reason: length, usage: { input_tokens: 5, output_tokens: 2 } }
  - name: refuse
    match: { contains: forbidden }
    repeat: true
    reply: { text: "", finish_reason: content_filter }
steps:
  loop:
    - reply:
        text: "Let me check."
        chunking: { chars: 4 }
        tool_calls: [{ name: get_weather, arguments: { city: Paris } }]
    - reply: { text: "It is 18 degrees in Paris.", usage: { input_tokens: 30, output_tokens: 8 } }
  busy:
    - error: { code: RESOURCE_EXHAUSTED, message: "slow down" }
  broken:
    - reply: { text: "one two three four", chunking: { chars: 4 } }
      break: { after_chunks: 2, then: error, error: { code: UNAVAILABLE, message: "the link broke" } }
`;

const getWeather: FunctionDeclaration = {
  name: "get_weather",
  description: "The weather in a city",
  parametersJsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("Google's @google/genai SDK against modelstub", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  /** The SDK on its defaults but the base URL, its calls in `session` (at `step` when given). */
  function genai(session: string, step?: string): GoogleGenAI {
    const headers: Record<string, string> = { "x-modelstub-session": session };
    if (step) headers["x-modelstub-step"] = step;
    return new GoogleGenAI({ apiKey: "unused", httpOptions: { baseUrl: h.base, headers } });
  }

  /** One turn, unary or streamed; a stream's chunks are merged as a caller would: texts joined, parts in order, the last chunk's finish and usage. */
  async function turn(
    ai: GoogleGenAI,
    stream: boolean,
    contents: Content[],
  ): Promise<{ content: Content; finishReason: string | undefined; usage: unknown; chunks: number }> {
    const params = {
      model: "gemini-stub",
      contents,
      config: { systemInstruction: "You are terse.", tools: [{ functionDeclarations: [getWeather] }], maxOutputTokens: 256 },
    };
    if (!stream) {
      const r = await ai.models.generateContent(params);
      return { content: r.candidates![0]!.content!, finishReason: r.candidates![0]!.finishReason, usage: r.usageMetadata, chunks: 1 };
    }
    const chunks: GenerateContentResponse[] = [];
    for await (const c of await ai.models.generateContentStream(params)) chunks.push(c);
    const parts = chunks.flatMap((c) => c.candidates![0]!.content!.parts!);
    const text = parts.flatMap((p) => (p.text ? [p.text] : [])).join("");
    const last = chunks[chunks.length - 1]!;
    return {
      content: { role: "model", parts: [...(text ? [{ text }] : []), ...parts.filter((p) => p.functionCall)] },
      finishReason: last.candidates![0]!.finishReason,
      usage: last.usageMetadata,
      chunks: chunks.length,
    };
  }

  for (const stream of [false, true]) {
    const how = stream ? "generateContentStream" : "generateContent";
    it(`runs a tool loop through ${how}: the call comes with an id, and step 2 sends the call and its result back to the engine as any front does`, async () => {
      const session = `loop-${how}`;
      const ai = genai(session, "loop");
      const contents: Content[] = [{ role: "user", parts: [{ text: "What is the weather in Paris?" }] }];
      const first = await turn(ai, stream, contents);
      expect(first.content).toEqual({
        role: "model",
        parts: [{ text: "Let me check." }, { functionCall: { id: `call-${session}-1-0`, name: "get_weather", args: { city: "Paris" } } }],
      });
      expect(first.finishReason).toBe("STOP");
      // Streamed, the text comes in the script's chunks and the call whole with the finish.
      if (stream) expect(first.chunks).toBe(5);
      const call = first.content.parts![1]!.functionCall!;
      contents.push(first.content, { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: "18 degrees" } } }] });
      const second = await turn(ai, stream, contents);
      expect(second.content).toEqual({ role: "model", parts: [{ text: "It is 18 degrees in Paris." }] });
      expect(second.usage).toEqual({ promptTokenCount: 30, candidatesTokenCount: 8, totalTokenCount: 38 });
      // What the model saw on step 2: the system instruction, the question, the call, and the result pointing to it.
      const messages = h.stub.episode(session).calls[1]!.request!.messages;
      expect(messages.map((m) => [Role[m.role], m.content, m.toolCallId, m.toolCalls.map((c) => [c.id, c.name, c.arguments])])).toEqual([
        ["SYSTEM", "You are terse.", "", []],
        ["USER", "What is the weather in Paris?", "", []],
        ["ASSISTANT", "Let me check.", "", [[call.id, "get_weather", '{"city":"Paris"}']]],
        ["TOOL", "18 degrees", call.id, []],
      ]);
      expect(h.stub.episode(session).calls[1]!.request!.sampling?.maxTokens).toBe(256);
    });
  }

  it("says MAX_TOKENS for a reply cut at its length, and SAFETY for a refusal, unary and streamed", async () => {
    const ai = genai("finish");
    for (const stream of [false, true]) {
      const long = await turn(ai, stream, [{ role: "user", parts: [{ text: "write a lot" }] }]);
      expect([long.content.parts, long.finishReason, long.usage]).toEqual([
        [{ text: "Once upon" }],
        "MAX_TOKENS",
        { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
      ]);
      const refused = await turn(ai, stream, [{ role: "user", parts: [{ text: "something forbidden" }] }]);
      expect(refused.finishReason).toBe("SAFETY");
    }
  });

  it("lists the script's models and gets one by id, in Gemini's shape", async () => {
    const ai = genai("models");
    const listed = [];
    for await (const m of await ai.models.list()) listed.push(m);
    expect(listed).toEqual([
      expect.objectContaining({
        name: "models/gemini-stub",
        displayName: "Gemini Stub",
        inputTokenLimit: 32000,
        supportedActions: ["generateContent", "streamGenerateContent"],
      }),
    ]);
    expect(await ai.models.get({ model: "gemini-stub" })).toMatchObject({ name: "models/gemini-stub" });
    const missing = await ai.models.get({ model: "nope" }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(404);
    expect(JSON.parse((missing as ApiError).message)).toEqual({
      error: { code: 404, message: expect.stringContaining('no model "nope"'), status: "NOT_FOUND" },
    });
  });

  it("throws a scripted error as an ApiError with the status code and Google's body", async () => {
    const err = await genai("busy", "busy")
      .models.generateContent({ model: "gemini-stub", contents: "hi" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect(JSON.parse((err as ApiError).message)).toEqual({ error: { code: 429, message: "slow down", status: "RESOURCE_EXHAUSTED" } });
  });

  it("throws a stream broken by a scripted error after the chunks before the break", async () => {
    const texts: string[] = [];
    const err = await (async () => {
      for await (const c of await genai("broken", "broken").models.generateContentStream({ model: "gemini-stub", contents: "hi" })) texts.push(c.text ?? "");
    })().catch((e: unknown) => e);
    expect(texts).toEqual(["one ", "two "]);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
    expect((err as ApiError).message).toContain('"status":"UNAVAILABLE"');
  });
});
