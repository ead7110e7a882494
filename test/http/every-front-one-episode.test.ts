// Longer than 250 lines because one agent loop is written for every front (gRPC, in process,
// each HTTP dialect) so that their episodes can be compared byte for byte.
import Anthropic from "@anthropic-ai/sdk";
import { create } from "@bufbuild/protobuf";
import { GoogleGenAI, type Content, type GenerateContentResponse } from "@google/genai";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  GenerateRequestSchema,
  MessageSchema,
  Role,
  SamplingParamsSchema,
  ToolCallSchema,
  ToolSchema,
  type GenerateResponse,
  type GenerateStreamResponse,
  type Message,
} from "../../gen/modelstub/v1/model_pb.js";
import { collect } from "../support/requests.js";
import { startStubServer } from "../support/start-stub-server.js";
import { startHttpStub } from "./http-stub.js";

// One agent loop, driven through each front by that front's own client, against one script: the
// five sessions must record the same episode bytes, and the five clients see the same turns.

const script = `
entries:
  - name: answer
    match: { tool_result: bash }
    repeat: true
    reply: "Found: {{last_tool_result}}"
  - name: look
    match: { regex: 'list (\\S+)' }
    repeat: true
    reply:
      text: "Looking."
      chunking: { chars: 3 }
      tool_calls: [{ name: bash, arguments: { command: "ls {{match.1}}" } }]
  - name: bye
    repeat: true
    reply: "Bye."
`;

const system = "You are terse.";
const question = "list /tmp please";
const toolOutput = "a.txt b.txt";
const schema = { type: "object", properties: { command: { type: "string" } }, required: ["command"] };

/** One assistant turn as the client saw it. */
interface Turn {
  text: string;
  calls: [id: string, name: string, args: string][];
}

/**
 * The loop every executor runs: ask (streamed), run the tool it calls, send the result (unary),
 * then say thanks (streamed). `front` sends a turn and returns what came back.
 */
async function agentLoop(front: { turn(stream: boolean, history: Turn[]): Promise<Turn> }): Promise<Turn[]> {
  const seen: Turn[] = [];
  seen.push(await front.turn(true, seen));
  seen.push(await front.turn(false, seen));
  seen.push(await front.turn(true, seen));
  return seen;
}

async function viaGrpc(): Promise<{ turns: Turn[]; episode: Buffer }> {
  const s = await startStubServer(script, { clock: "virtual" });
  try {
    const tools = [create(ToolSchema, { name: "bash", description: "Runs a command.", parametersJson: JSON.stringify(schema) })];
    const messagesFor = (history: Turn[]): Message[] => {
      const m: Message[] = [create(MessageSchema, { role: Role.SYSTEM, content: system }), create(MessageSchema, { role: Role.USER, content: question })];
      const [first, second] = history;
      if (first) {
        m.push(
          create(MessageSchema, {
            role: Role.ASSISTANT,
            content: first.text,
            toolCalls: first.calls.map(([id, name, args]) => create(ToolCallSchema, { id, name, arguments: args })),
          }),
        );
        m.push(create(MessageSchema, { role: Role.TOOL, toolCallId: first.calls[0]![0], content: toolOutput }));
      }
      if (second) m.push(create(MessageSchema, { role: Role.ASSISTANT, content: second.text }), create(MessageSchema, { role: Role.USER, content: "thanks" }));
      return m;
    };
    const turns = await agentLoop({
      async turn(stream, history) {
        const request = create(GenerateRequestSchema, {
          model: "m1",
          messages: messagesFor(history),
          tools,
          sampling: create(SamplingParamsSchema, { maxTokens: 256 }),
        });
        const options = { session: "agent" };
        if (!stream) return turnOfResponse(await s.port.generate(request, options));
        const streamed = await collect(s.port.generateStream(request, options));
        if (streamed.error) throw streamed.error;
        return turnOfFrames(streamed.frames);
      },
    });
    return { turns, episode: Buffer.from(s.stub.episodeBytes("agent")) };
  } finally {
    await s.close();
  }
}

function turnOfResponse(r: GenerateResponse): Turn {
  return { text: r.message?.content ?? "", calls: (r.message?.toolCalls ?? []).map((c) => [c.id, c.name, c.arguments]) };
}

function turnOfFrames(frames: GenerateStreamResponse[]): Turn {
  const turn: Turn = { text: "", calls: [] };
  for (const f of frames) {
    if (f.frame.case === "textDelta") turn.text += f.frame.value;
    if (f.frame.case === "toolCallDelta") {
      const d = f.frame.value;
      const call = (turn.calls[d.index] ??= ["", "", ""]);
      if (d.id) call[0] = d.id;
      if (d.name) call[1] = d.name;
      call[2] += d.arguments;
    }
  }
  return turn;
}

/** Runs `loop` against a fresh HTTP front; returns what it saw and session "agent"'s episode bytes. */
async function viaHttp(loop: (base: string, headers: Record<string, string>) => Promise<Turn[]>): Promise<{ turns: Turn[]; episode: Buffer }> {
  const h = await startHttpStub(script);
  try {
    const turns = await loop(h.base, { "x-modelstub-session": "agent" });
    return { turns, episode: Buffer.from(h.stub.episodeBytes("agent")) };
  } finally {
    await h.close();
  }
}

const viaChatCompletions = () =>
  viaHttp(async (base, headers) => {
    const { default: OpenAIClient } = await import("openai");
    const client = new OpenAIClient({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0, defaultHeaders: headers });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "bash", description: "Runs a command.", parameters: schema } }];
    return agentLoop({
      async turn(stream, history) {
        const messages: OpenAI.ChatCompletionMessageParam[] = [
          { role: "system", content: system },
          { role: "user", content: question },
        ];
        const [first, second] = history;
        if (first) {
          messages.push({
            role: "assistant",
            content: first.text,
            tool_calls: first.calls.map(([id, name, args]) => ({ id, type: "function", function: { name, arguments: args } })),
          });
          messages.push({ role: "tool", tool_call_id: first.calls[0]![0], content: toolOutput });
        }
        if (second) messages.push({ role: "assistant", content: second.text }, { role: "user", content: "thanks" });
        const body = { model: "m1", messages, tools, max_tokens: 256 };
        const done = stream ? await client.chat.completions.stream(body).finalChatCompletion() : await client.chat.completions.create(body);
        const m = done.choices[0]!.message;
        return {
          text: m.content ?? "",
          calls: (m.tool_calls ?? []).map((c) => (c.type === "function" ? [c.id, c.function.name, c.function.arguments] : ["", "", ""])),
        };
      },
    });
  });

const viaAnthropic = () =>
  viaHttp(async (base, headers) => {
    const client = new Anthropic({ baseURL: base, apiKey: "unused", maxRetries: 0, defaultHeaders: headers });
    const tools: Anthropic.Tool[] = [{ name: "bash", description: "Runs a command.", input_schema: schema as Anthropic.Tool.InputSchema }];
    return agentLoop({
      async turn(stream, history) {
        const messages: Anthropic.MessageParam[] = [{ role: "user", content: question }];
        const [first, second] = history;
        if (first) {
          messages.push({
            role: "assistant",
            content: [
              { type: "text", text: first.text },
              ...first.calls.map(([id, name, args]): Anthropic.ToolUseBlockParam => ({ type: "tool_use", id, name, input: JSON.parse(args) })),
            ],
          });
          messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: first.calls[0]![0], content: toolOutput }] });
        }
        if (second) messages.push({ role: "assistant", content: second.text }, { role: "user", content: "thanks" });
        const body = { model: "m1", system, messages, tools, max_tokens: 256 };
        const done = stream ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
        const text = done.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
        const calls = done.content.flatMap((b): Turn["calls"] => (b.type === "tool_use" ? [[b.id, b.name, JSON.stringify(b.input)]] : []));
        return { text, calls };
      },
    });
  });

const viaResponses = () =>
  viaHttp(async (base, headers) => {
    const { default: OpenAIClient } = await import("openai");
    const client = new OpenAIClient({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0, defaultHeaders: headers });
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: "function", name: "bash", description: "Runs a command.", parameters: schema, strict: null }];
    return agentLoop({
      async turn(stream, history) {
        const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: question }];
        const [first, second] = history;
        if (first) {
          input.push({ role: "assistant", content: first.text });
          for (const [id, name, args] of first.calls) input.push({ type: "function_call", call_id: id, name, arguments: args });
          input.push({ type: "function_call_output", call_id: first.calls[0]![0], output: toolOutput });
        }
        if (second) input.push({ role: "assistant", content: second.text }, { role: "user", content: "thanks" });
        const body = { model: "m1", instructions: system, input, tools, max_output_tokens: 256, store: false };
        const done = stream ? await client.responses.stream(body).finalResponse() : await client.responses.create(body);
        const calls = done.output.flatMap((o): Turn["calls"] => (o.type === "function_call" ? [[o.call_id, o.name, o.arguments]] : []));
        return { text: done.output_text, calls };
      },
    });
  });

const viaGemini = () =>
  viaHttp(async (base, headers) => {
    const ai = new GoogleGenAI({ apiKey: "unused", httpOptions: { baseUrl: base, headers } });
    const config = {
      systemInstruction: system,
      tools: [{ functionDeclarations: [{ name: "bash", description: "Runs a command.", parametersJsonSchema: schema }] }],
      maxOutputTokens: 256,
    };
    return agentLoop({
      async turn(stream, history) {
        const contents: Content[] = [{ role: "user", parts: [{ text: question }] }];
        const [first, second] = history;
        if (first) {
          contents.push({
            role: "model",
            parts: [
              { text: first.text },
              ...first.calls.map(([id, name, args]) => ({ functionCall: { id, name, args: JSON.parse(args) as Record<string, unknown> } })),
            ],
          });
          const [id, name] = first.calls[0]!;
          contents.push({ role: "user", parts: [{ functionResponse: { id, name, response: { output: toolOutput } } }] });
        }
        if (second) contents.push({ role: "model", parts: [{ text: second.text }] }, { role: "user", parts: [{ text: "thanks" }] });
        const params = { model: "m1", contents, config };
        const chunks: GenerateContentResponse[] = stream ? [] : [await ai.models.generateContent(params)];
        if (stream) for await (const c of await ai.models.generateContentStream(params)) chunks.push(c);
        const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
        const calls = parts.flatMap((p): Turn["calls"] =>
          p.functionCall ? [[p.functionCall.id ?? "", p.functionCall.name ?? "", JSON.stringify(p.functionCall.args)]] : [],
        );
        return { text: parts.map((p) => p.text ?? "").join(""), calls };
      },
    });
  });

describe("one agent loop through every front", () => {
  it("records byte-identical episodes over gRPC, chat completions, Anthropic Messages, OpenAI Responses and Gemini, and every client sees the same turns", async () => {
    const grpc = await viaGrpc();
    expect(grpc.turns).toEqual([
      { text: "Looking.", calls: [["call-agent-1-0", "bash", '{"command":"ls /tmp"}']] },
      { text: "Found: a.txt b.txt", calls: [] },
      { text: "Bye.", calls: [] },
    ]);
    expect(grpc.episode.length).toBeGreaterThan(500);
    for (const [front, run] of [
      ["chat completions", viaChatCompletions],
      ["Anthropic Messages", viaAnthropic],
      ["OpenAI Responses", viaResponses],
      ["Gemini", viaGemini],
    ] as const) {
      const other = await run();
      expect(other.turns, front).toEqual(grpc.turns);
      expect(other.episode.equals(grpc.episode), `${front}: episode bytes differ from gRPC's`).toBe(true);
    }
  });
});
