import { readFileSync } from "node:fs";
import { GoogleGenAI, type Content, type FunctionCall, type GenerateContentResponse } from "@google/genai";
import { ChatAnthropic } from "@langchain/anthropic";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, type AIMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CallMethod } from "../../gen/modelstub/v1/episode_pb.js";
import { Role } from "../../gen/modelstub/v1/model_pb.js";
import { startHttpStub } from "./http-stub.js";

/*
 * Issue 32, item 4: JavaScript clients on their default paths, the JS half of the client matrix
 * (the Python half is test/interop/python/clients.py, on the same script): LangChain JS chat
 * models and Google's @google/genai. Each client is set up with only its base URL and API key,
 * so its calls carry no session header and land in session "default" of a stub of its own: a
 * tool loop unary, then one streamed, each two model calls.
 */

const script = readFileSync(new URL("../interop/clients.yaml", import.meta.url), "utf8");
const prompt = "What is the weather in Paris?";

/** What a loop saw: the first answer's text and tool calls, the cities the tool ran for, the final text. */
interface Loop {
  firstText: string;
  calls: [string, unknown][];
  ran: string[];
  finalText: string;
}

/** The tool every client runs: the weather in a city, each city it ran for pushed to `ran`. */
const weather = (city: string, ran: string[]) => {
  ran.push(city);
  return `18 degrees in ${city}`;
};

interface Client {
  name: string;
  /** The route of the unary loop's calls, then the streamed loop's. */
  routes: [string, string];
  loop(base: string, streamed: boolean): Promise<Loop>;
}

/** A LangChain chat model's tool loop: bindTools, then invoke, or stream with the chunks concatenated (as LangChain documents). */
function langchain(name: string, route: string, chatModel: (base: string) => BaseChatModel): Client {
  return {
    name,
    routes: [route, route],
    async loop(base, streamed) {
      const ran: string[] = [];
      const getWeather = tool(({ city }) => weather(city, ran), {
        name: "get_weather",
        description: "The weather in a city",
        schema: z.object({ city: z.string() }),
      });
      const model = chatModel(base).bindTools!([getWeather]);
      async function ask(messages: BaseMessage[]): Promise<AIMessage | AIMessageChunk> {
        if (!streamed) return model.invoke(messages);
        let whole: AIMessageChunk | undefined;
        for await (const chunk of await model.stream(messages)) whole = whole === undefined ? chunk : whole.concat(chunk);
        return whole!;
      }
      const messages: BaseMessage[] = [new HumanMessage(prompt)];
      const first = await ask(messages);
      messages.push(first);
      for (const call of first.tool_calls ?? []) messages.push(await getWeather.invoke({ ...call, type: "tool_call" }));
      const second = await ask(messages);
      return { firstText: first.text, calls: (first.tool_calls ?? []).map((c) => [c.name, c.args]), ran, finalText: second.text };
    },
  };
}

/**
 * @google/genai's tool loop: generateContent, or generateContentStream with the chunks' texts
 * joined and their function calls kept; the tool's result goes back as a functionResponse part
 * under the model's call id.
 */
const googleGenAI: Client = {
  name: "@google/genai GoogleGenAI",
  routes: ["/v1/models/gemini-2.5-flash:generateContent", "/v1/models/gemini-2.5-flash:streamGenerateContent"],
  async loop(base, streamed) {
    const ran: string[] = [];
    const ai = new GoogleGenAI({ apiKey: "unused", httpOptions: { baseUrl: base } });
    const config = {
      tools: [
        {
          functionDeclarations: [
            {
              name: "get_weather",
              description: "The weather in a city",
              parametersJsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            },
          ],
        },
      ],
    };
    async function ask(contents: Content[]): Promise<{ text: string; calls: FunctionCall[] }> {
      const params = { model: "gemini-2.5-flash", contents, config };
      const chunks: GenerateContentResponse[] = [];
      if (!streamed) chunks.push(await ai.models.generateContent(params));
      else for await (const chunk of await ai.models.generateContentStream(params)) chunks.push(chunk);
      // The parts themselves, not the response's `text` (which warns when a function call is among them).
      const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
      return { text: parts.map((p) => p.text ?? "").join(""), calls: parts.flatMap((p) => (p.functionCall ? [p.functionCall] : [])) };
    }
    const contents: Content[] = [{ role: "user", parts: [{ text: prompt }] }];
    const first = await ask(contents);
    contents.push({ role: "model", parts: [...(first.text ? [{ text: first.text }] : []), ...first.calls.map((functionCall) => ({ functionCall }))] });
    contents.push({
      role: "user",
      parts: first.calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { output: weather((c.args as { city: string }).city, ran) } } })),
    });
    const second = await ask(contents);
    return { firstText: first.text, calls: first.calls.map((c) => [c.name!, c.args]), ran, finalText: second.text };
  },
};

const clients: Client[] = [
  langchain("ChatOpenAI", "/v1/chat/completions", (base) => new ChatOpenAI({ model: "gpt-4o", apiKey: "unused", configuration: { baseURL: `${base}/v1` } })),
  langchain(
    "ChatOpenAI with useResponsesApi",
    "/v1/responses",
    (base) => new ChatOpenAI({ model: "gpt-4o", apiKey: "unused", configuration: { baseURL: `${base}/v1` }, useResponsesApi: true }),
  ),
  langchain("ChatAnthropic", "/v1/messages", (base) => new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "unused", anthropicApiUrl: base })),
  googleGenAI,
];

describe("JavaScript clients on their default paths", () => {
  for (const client of clients) {
    it(`${client.name}: a tool loop unary and streamed, the same calls and texts, recorded in session default`, async () => {
      const h = await startHttpStub(script);
      try {
        const unary = await client.loop(h.base, false);
        expect(unary).toEqual({
          firstText: "Let me check.",
          calls: [["get_weather", { city: "Paris" }]],
          ran: ["Paris"],
          finalText: "The tool says: 18 degrees in Paris",
        });
        expect(await client.loop(h.base, true)).toEqual(unary);

        // The episode: the unary loop's two calls, then the streamed loop's; each second call sent
        // back the assistant's tool call under the model's id, and the tool's result under it.
        const calls = h.stub.episode("default").calls;
        expect(calls.map((c) => [c.method, c.entry])).toEqual([
          [CallMethod.GENERATE, "entries[1]"],
          [CallMethod.GENERATE, "entries[0]"],
          [CallMethod.GENERATE_STREAM, "entries[1]"],
          [CallMethod.GENERATE_STREAM, "entries[0]"],
        ]);
        for (const i of [1, 3]) {
          const id = calls[i - 1]!.response!.message!.toolCalls[0]!.id;
          const messages = calls[i]!.request!.messages;
          expect(messages.filter((m) => m.role === Role.ASSISTANT).map((m) => m.toolCalls.map((c) => [c.id, c.name, JSON.parse(c.arguments)]))).toEqual([
            [[id, "get_weather", { city: "Paris" }]],
          ]);
          expect(messages.filter((m) => m.role === Role.TOOL).map((m) => [m.toolCallId, m.content])).toEqual([[id, "18 degrees in Paris"]]);
          expect(calls[i]!.response!.message!.content).toBe("The tool says: 18 degrees in Paris");
        }
        const [unaryRoute, streamedRoute] = client.routes;
        expect(h.logs.map((l) => `${l.method} ${l.path}`)).toEqual([...Array(2).fill(`POST ${unaryRoute}`), ...Array(2).fill(`POST ${streamedRoute}`)]);
      } finally {
        await h.close();
      }
    });
  }
});
