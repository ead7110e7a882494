import { create, toBinary } from "@bufbuild/protobuf";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  GenerateRequestSchema,
  MessageSchema,
  Role,
  SamplingParamsSchema,
  ToolCallSchema,
  ToolSchema,
  type GenerateRequest,
} from "../../gen/modelstub/v1/model_pb.js";
import { parseChatRequest } from "../../src/http/parse-chat-request.js";
import { parseResponsesRequest } from "../../src/http/parse-responses-request.js";
import { startHttpStub } from "./http-stub.js";

const bash = { type: "object", properties: { command: { type: "string" } }, required: ["command"] };

/** A multi-turn tool conversation, as OpenAI chat completions writes it. */
const chatMessages: OpenAI.ChatCompletionMessageParam[] = [
  { role: "system", content: "You are terse." },
  {
    role: "user",
    content: [
      { type: "text", text: "list " },
      { type: "text", text: "/tmp" },
    ],
  },
  {
    role: "assistant",
    content: "Looking.",
    tool_calls: [
      { id: "call-1", type: "function", function: { name: "bash", arguments: '{"command":"ls /tmp"}' } },
      { id: "call-2", type: "function", function: { name: "read", arguments: '{"path":"/etc/hosts"}' } },
    ],
  },
  { role: "tool", tool_call_id: "call-1", content: "a.txt b.txt" },
  { role: "tool", tool_call_id: "call-2", content: "127.0.0.1 localhost" },
  { role: "assistant", content: null, tool_calls: [{ id: "call-3", type: "function", function: { name: "bash", arguments: "{}" } }] },
  { role: "tool", tool_call_id: "call-3", content: "ok" },
  { role: "developer", content: "Answer in one line." },
  { role: "assistant", content: "Done." },
  { role: "user", content: "thanks" },
];
const chatTools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "bash", description: "Runs a command.", parameters: bash } },
  { type: "function", function: { name: "read" } },
];

/** The same conversation, as OpenAI's Responses API writes it (and as a client replays `output`). */
const input: OpenAI.Responses.ResponseInputItem[] = [
  {
    role: "user",
    content: [
      { type: "input_text", text: "list " },
      { type: "input_text", text: "/tmp" },
    ],
  },
  // A reasoning model's item, replayed: modelstub skips it.
  { type: "reasoning", id: "rs_1", summary: [] },
  { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Looking.", annotations: [] }] },
  { type: "function_call", id: "fc_1", status: "completed", call_id: "call-1", name: "bash", arguments: '{"command":"ls /tmp"}' },
  { type: "function_call", call_id: "call-2", name: "read", arguments: '{"path":"/etc/hosts"}' },
  { type: "function_call_output", call_id: "call-1", output: "a.txt b.txt" },
  { type: "function_call_output", call_id: "call-2", output: [{ type: "input_text", text: "127.0.0.1 localhost" }] },
  // A turn that only calls a tool: its function_call follows a tool result, so it starts a new assistant message.
  { type: "function_call", call_id: "call-3", name: "bash", arguments: "{}" },
  { type: "function_call_output", call_id: "call-3", output: "ok" },
  { role: "developer", content: "Answer in one line." },
  { role: "assistant", content: "Done." },
  { type: "message", role: "user", content: "thanks" },
];
const responseTools: OpenAI.Responses.FunctionTool[] = [
  { type: "function", name: "bash", description: "Runs a command.", parameters: bash, strict: true },
  { type: "function", name: "read", parameters: null, strict: null },
];

const chatBody = { model: "m1", messages: chatMessages, tools: chatTools, temperature: 0.25, top_p: 0.5, max_completion_tokens: 64 };
const responsesBody = {
  model: "m1",
  instructions: "You are terse.",
  input,
  tools: responseTools,
  temperature: 0.25,
  top_p: 0.5,
  max_output_tokens: 64,
  store: false,
};

/** The same conversation, as a gRPC client builds it. */
function grpcRequest(): GenerateRequest {
  const call = (id: string, name: string, args: string) => create(ToolCallSchema, { id, name, arguments: args });
  return create(GenerateRequestSchema, {
    model: "m1",
    messages: [
      create(MessageSchema, { role: Role.SYSTEM, content: "You are terse." }),
      create(MessageSchema, { role: Role.USER, content: "list /tmp" }),
      create(MessageSchema, {
        role: Role.ASSISTANT,
        content: "Looking.",
        toolCalls: [call("call-1", "bash", '{"command":"ls /tmp"}'), call("call-2", "read", '{"path":"/etc/hosts"}')],
      }),
      create(MessageSchema, { role: Role.TOOL, toolCallId: "call-1", content: "a.txt b.txt" }),
      create(MessageSchema, { role: Role.TOOL, toolCallId: "call-2", content: "127.0.0.1 localhost" }),
      create(MessageSchema, { role: Role.ASSISTANT, toolCalls: [call("call-3", "bash", "{}")] }),
      create(MessageSchema, { role: Role.TOOL, toolCallId: "call-3", content: "ok" }),
      create(MessageSchema, { role: Role.SYSTEM, content: "Answer in one line." }),
      create(MessageSchema, { role: Role.ASSISTANT, content: "Done." }),
      create(MessageSchema, { role: Role.USER, content: "thanks" }),
    ],
    tools: [create(ToolSchema, { name: "bash", description: "Runs a command.", parametersJson: JSON.stringify(bash) }), create(ToolSchema, { name: "read" })],
    sampling: create(SamplingParamsSchema, { temperature: 0.25, topP: 0.5, maxTokens: 64 }),
  });
}

const bytes = (r: GenerateRequest) => Buffer.from(toBinary(GenerateRequestSchema, r));

describe("one conversation through the Responses API, chat completions and gRPC", () => {
  it("builds a byte-identical GenerateRequest from all three", () => {
    const chat = parseChatRequest(JSON.stringify(chatBody));
    const responses = parseResponsesRequest(JSON.stringify(responsesBody));
    if ("error" in chat || "error" in responses) throw new Error(JSON.stringify([chat, responses]));
    expect(bytes(responses.value.request).equals(bytes(chat.value.request))).toBe(true);
    expect(bytes(responses.value.request).equals(bytes(grpcRequest()))).toBe(true);
  });

  it("sends only the sampling fields the client sent, and none when it sent none", () => {
    const none = parseResponsesRequest(JSON.stringify({ input: "hi" }));
    const one = parseResponsesRequest(JSON.stringify({ input: "hi", max_output_tokens: 9, temperature: null }));
    if ("error" in none || "error" in one) throw new Error("refused");
    expect(none.value.request.sampling).toBeUndefined();
    expect(
      bytes(one.value.request).equals(
        bytes(
          create(GenerateRequestSchema, {
            messages: [create(MessageSchema, { role: Role.USER, content: "hi" })],
            sampling: create(SamplingParamsSchema, { maxTokens: 9 }),
          }),
        ),
      ),
    ).toBe(true);
  });

  it("records byte-identical episodes whether the conversation came as chat completions or as Responses, unary and streamed", async () => {
    const script = `
entries:
  - repeat: true
    reply:
      text: "Found {{last_tool_result}}"
      tool_calls: [{ name: bash, arguments: { command: "ls" } }]
`;
    const episodeOf = async (send: (h: Awaited<ReturnType<typeof startHttpStub>>) => Promise<void>) => {
      const h = await startHttpStub(script);
      try {
        await send(h);
        return Buffer.from(h.stub.episodeBytes("same"));
      } finally {
        await h.close();
      }
    };
    const viaChat = await episodeOf(async (h) => {
      const client = h.client({ session: "same" });
      await client.chat.completions.create(chatBody as OpenAI.ChatCompletionCreateParamsNonStreaming);
      for await (const _ of await client.chat.completions.create({ ...(chatBody as OpenAI.ChatCompletionCreateParamsNonStreaming), stream: true }));
    });
    const viaResponses = await episodeOf(async (h) => {
      const client = h.client({ session: "same" });
      await client.responses.create(responsesBody);
      await client.responses.stream(responsesBody).finalResponse();
    });
    expect(viaChat.length).toBeGreaterThan(300);
    expect(viaResponses.equals(viaChat)).toBe(true);
  });
});
