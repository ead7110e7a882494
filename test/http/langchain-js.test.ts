import { readFileSync } from "node:fs";
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
 * Issue 32, item 4: LangChain JS on its default paths, the JS half of the client matrix (the
 * Python half is test/interop/python/clients.py, on the same script). Each chat model is set up
 * with only its base URL and API key, so its calls carry no session header and land in session
 * "default" of a stub of its own: a tool loop with bindTools and invoke, then one with stream
 * (the chunks concatenated, as LangChain documents), each two model calls.
 */

const script = readFileSync(new URL("../interop/clients.yaml", import.meta.url), "utf8");
const prompt = "What is the weather in Paris?";

const clients: { name: string; route: string; model: (base: string) => BaseChatModel }[] = [
  { name: "ChatOpenAI", route: "/v1/chat/completions", model: (base) => new ChatOpenAI({ model: "gpt-4o", apiKey: "unused", configuration: { baseURL: `${base}/v1` } }) },
  {
    name: "ChatOpenAI with useResponsesApi",
    route: "/v1/responses",
    model: (base) => new ChatOpenAI({ model: "gpt-4o", apiKey: "unused", configuration: { baseURL: `${base}/v1` }, useResponsesApi: true }),
  },
  { name: "ChatAnthropic", route: "/v1/messages", model: (base) => new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "unused", anthropicApiUrl: base }) },
];

describe("LangChain JS chat models on their default paths", () => {
  for (const client of clients) {
    it(`${client.name}: a tool loop with invoke and with stream, the same calls and texts, recorded in session default`, async () => {
      const h = await startHttpStub(script);
      try {
        const cities: string[] = [];
        const getWeather = tool(
          ({ city }) => {
            cities.push(city);
            return `18 degrees in ${city}`;
          },
          {
            name: "get_weather",
            description: "The weather in a city",
            schema: z.object({ city: z.string() }),
          },
        );
        const model = client.model(h.base).bindTools!([getWeather]);

        async function ask(messages: BaseMessage[], streamed: boolean): Promise<AIMessage | AIMessageChunk> {
          if (!streamed) return model.invoke(messages);
          let whole: AIMessageChunk | undefined;
          for await (const chunk of await model.stream(messages)) whole = whole === undefined ? chunk : whole.concat(chunk);
          return whole!;
        }
        async function loop(streamed: boolean) {
          cities.length = 0;
          const messages: BaseMessage[] = [new HumanMessage(prompt)];
          const first = await ask(messages, streamed);
          messages.push(first);
          for (const call of first.tool_calls ?? []) messages.push(await getWeather.invoke({ ...call, type: "tool_call" }));
          const second = await ask(messages, streamed);
          return { firstText: first.text, calls: (first.tool_calls ?? []).map((c) => [c.name, c.args]), ran: [...cities], finalText: second.text };
        }

        const unary = await loop(false);
        expect(unary).toEqual({ firstText: "Let me check.", calls: [["get_weather", { city: "Paris" }]], ran: ["Paris"], finalText: "The tool says: 18 degrees in Paris" });
        expect(await loop(true)).toEqual(unary);

        // The episode: the invoke loop's two calls, then the stream loop's; each second call sent
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
          expect(messages.filter((m) => m.role === Role.ASSISTANT).map((m) => m.toolCalls.map((c) => [c.id, c.name, JSON.parse(c.arguments)]))).toEqual([[[id, "get_weather", { city: "Paris" }]]]);
          expect(messages.filter((m) => m.role === Role.TOOL).map((m) => [m.toolCallId, m.content])).toEqual([[id, "18 degrees in Paris"]]);
          expect(calls[i]!.response!.message!.content).toBe("The tool says: 18 degrees in Paris");
        }
        expect(h.logs.map((l) => `${l.method} ${l.path}`)).toEqual(Array(4).fill(`POST ${client.route}`));
      } finally {
        await h.close();
      }
    });
  }
});
