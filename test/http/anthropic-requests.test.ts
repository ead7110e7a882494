// Longer than 250 lines because it is the Anthropic request in three parts: the parser's
// mapping, the refusals of malformed requests, and a tool loop beside chat completions.
import { create, toBinary } from "@bufbuild/protobuf";
import Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema, MessageSchema, Role, SamplingParamsSchema, ToolCallSchema, ToolSchema } from "../../gen/modelstub/v1/model_pb.js";
import { parseAnthropicRequest } from "../../src/http/parse-anthropic-request.js";
import { parseChatRequest } from "../../src/http/parse-chat-request.js";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

const bashSchema = { type: "object" as const, properties: { command: { type: "string" } }, required: ["command"] };
const readSchema = { type: "object", properties: { path: { type: "string" } } };

/** A multi-turn tool conversation as an Anthropic Messages body: every kind of block modelstub reads, and fields it ignores. */
const anthropicBody = {
  model: "m1",
  max_tokens: 300,
  temperature: 0.25,
  top_p: 0.5,
  top_k: 5,
  stop_sequences: ["END"],
  metadata: { user_id: "u-1" },
  tool_choice: { type: "auto" },
  system: [
    { type: "text", text: "You are " },
    { type: "text", text: "terse.", cache_control: { type: "ephemeral" } },
  ],
  tools: [
    { name: "bash", description: "Runs a command.", input_schema: bashSchema },
    { type: "custom", name: "read", input_schema: readSchema },
  ],
  messages: [
    { role: "user", content: "list /tmp" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Two tools.", signature: "sig" },
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "call-1", name: "bash", input: { command: "ls /tmp" } },
        { type: "tool_use", id: "call-2", name: "read", input: { path: "a.txt" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call-1", content: "a.txt b.txt" },
        { type: "tool_result", tool_use_id: "call-2", content: [{ type: "text", text: "hello" }], is_error: false },
        { type: "text", text: "and now?" },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "redacted_thinking", data: "xyz" },
        { type: "tool_use", id: "call-3", name: "bash", input: { command: "wc -l a.txt" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call-3", content: "1 a.txt" }] },
  ],
};

/** The same conversation as a chat-completions body. */
const chatBody = {
  model: "m1",
  max_tokens: 300,
  temperature: 0.25,
  top_p: 0.5,
  stop: ["END"],
  tools: [
    { type: "function", function: { name: "bash", description: "Runs a command.", parameters: bashSchema } },
    { type: "function", function: { name: "read", parameters: readSchema } },
  ],
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "list /tmp" },
    {
      role: "assistant",
      content: "Looking.",
      tool_calls: [
        { id: "call-1", type: "function", function: { name: "bash", arguments: '{"command":"ls /tmp"}' } },
        { id: "call-2", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } },
      ],
    },
    { role: "tool", tool_call_id: "call-1", content: "a.txt b.txt" },
    { role: "tool", tool_call_id: "call-2", content: "hello" },
    { role: "user", content: "and now?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call-3", type: "function", function: { name: "bash", arguments: '{"command":"wc -l a.txt"}' } }] },
    { role: "tool", tool_call_id: "call-3", content: "1 a.txt" },
  ],
};

/** The same conversation as a gRPC client builds it. */
const grpcRequest = create(GenerateRequestSchema, {
  model: "m1",
  messages: [
    { role: Role.SYSTEM, content: "You are terse." },
    { role: Role.USER, content: "list /tmp" },
    {
      role: Role.ASSISTANT,
      content: "Looking.",
      toolCalls: [
        create(ToolCallSchema, { id: "call-1", name: "bash", arguments: '{"command":"ls /tmp"}' }),
        create(ToolCallSchema, { id: "call-2", name: "read", arguments: '{"path":"a.txt"}' }),
      ],
    },
    { role: Role.TOOL, toolCallId: "call-1", content: "a.txt b.txt" },
    { role: Role.TOOL, toolCallId: "call-2", content: "hello" },
    { role: Role.USER, content: "and now?" },
    { role: Role.ASSISTANT, toolCalls: [create(ToolCallSchema, { id: "call-3", name: "bash", arguments: '{"command":"wc -l a.txt"}' })] },
    { role: Role.TOOL, toolCallId: "call-3", content: "1 a.txt" },
  ].map((m) => create(MessageSchema, m)),
  tools: [
    create(ToolSchema, { name: "bash", description: "Runs a command.", parametersJson: JSON.stringify(bashSchema) }),
    create(ToolSchema, { name: "read", parametersJson: JSON.stringify(readSchema) }),
  ],
  sampling: create(SamplingParamsSchema, { temperature: 0.25, topP: 0.5, maxTokens: 300, stop: ["END"] }),
});

function bytesOf(parsed: { value: { request: Parameters<typeof toBinary<typeof GenerateRequestSchema>>[1] } } | { error: unknown }): Buffer {
  if ("error" in parsed) throw new Error(`refused: ${JSON.stringify(parsed.error)}`);
  return Buffer.from(toBinary(GenerateRequestSchema, parsed.value.request));
}

describe("parseAnthropicRequest()", () => {
  it("builds the GenerateRequest byte for byte that chat completions and a gRPC client build for the same conversation", () => {
    const anthropic = bytesOf(parseAnthropicRequest(JSON.stringify(anthropicBody)));
    expect(anthropic.equals(bytesOf(parseChatRequest(JSON.stringify(chatBody))))).toBe(true);
    expect(anthropic.equals(Buffer.from(toBinary(GenerateRequestSchema, grpcRequest)))).toBe(true);
  });
});

const user = { role: "user", content: "hi" };
const ok = { model: "m", max_tokens: 10, messages: [user] };

/** [what, body, the message the 400 starts with]. */
const malformed: [string, unknown, string][] = [
  ["malformed JSON", '{"model": ', "the request body is not valid JSON"],
  ["a body that is a list", [], "the request body must be a JSON object, got a list"],
  ["no model", { max_tokens: 10, messages: [user] }, "model is required"],
  ["no max_tokens", { model: "m", messages: [user] }, "max_tokens is required"],
  ["max_tokens of 0", { ...ok, max_tokens: 0 }, "max_tokens: expected at least 1"],
  ["max_tokens as a text", { ...ok, max_tokens: "10" }, "max_tokens: expected a whole number"],
  ["no messages", { model: "m", max_tokens: 10 }, "messages is required"],
  ["no turn at all", { ...ok, messages: [] }, "messages: expected at least one turn"],
  ["an unknown role", { ...ok, messages: [{ role: "robot", content: "x" }] }, 'messages[0].role: expected user or assistant (or system), got "robot"'],
  ["a turn without content", { ...ok, messages: [{ role: "user" }] }, "messages[0].content is required"],
  [
    "an image block",
    {
      ...ok,
      messages: [
        user,
        { role: "assistant", content: "ok" },
        {
          role: "user",
          content: [
            { type: "text", text: "see" },
            { type: "image", source: {} },
          ],
        },
      ],
    },
    'messages[2].content[1].type: modelstub reads text and tool_result blocks in a user turn, not "image"',
  ],
  [
    "a document block",
    { ...ok, messages: [{ role: "user", content: [{ type: "document", source: {} }] }] },
    'messages[0].content[0].type: modelstub reads text and tool_result blocks in a user turn, not "document"',
  ],
  [
    "a server tool block in history",
    { ...ok, messages: [user, { role: "assistant", content: [{ type: "server_tool_use", id: "s", name: "web_search", input: {} }] }] },
    "messages[1].content[0].type: modelstub reads text, tool_use, thinking and redacted_thinking blocks in an assistant turn",
  ],
  [
    "a tool_result in an assistant turn",
    { ...ok, messages: [user, { role: "assistant", content: [{ type: "tool_result", tool_use_id: "x" }] }] },
    "messages[1].content[0].type: modelstub reads text, tool_use",
  ],
  ["a block without a type", { ...ok, messages: [{ role: "user", content: [{ text: "hi" }] }] }, "messages[0].content[0].type is required"],
  [
    "a tool_use without input",
    { ...ok, messages: [user, { role: "assistant", content: [{ type: "tool_use", id: "c", name: "t" }] }] },
    "messages[1].content[0].input is required",
  ],
  [
    "a tool_result without its id",
    { ...ok, messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }] },
    "messages[0].content[0].tool_use_id is required",
  ],
  [
    "a tool_result holding an image",
    { ...ok, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "c", content: [{ type: "image", source: {} }] }] }] },
    `messages[0].content[0].content[0].type: modelstub reads text blocks in a tool_result's content, not "image"`,
  ],
  ["an empty user turn", { ...ok, messages: [{ role: "user", content: [] }] }, "messages[0].content: a user turn needs at least one content block"],
  [
    "a system prompt with an image",
    { ...ok, system: [{ type: "image", source: {} }] },
    'system[0].type: modelstub reads text blocks in a system prompt, not "image"',
  ],
  [
    "a server tool",
    { ...ok, tools: [{ type: "web_search_20250305", name: "web_search" }] },
    'tools[0].type: modelstub offers custom tools only ({name, description, input_schema}), not "web_search_20250305"',
  ],
  ["a tool without input_schema", { ...ok, tools: [{ name: "t" }] }, "tools[0].input_schema is required"],
  ["stop_sequences as a text", { ...ok, stop_sequences: "END" }, "stop_sequences: expected a list of strings"],
  ["10,001 turns", { ...ok, messages: Array.from({ length: 10_001 }, () => user) }, "messages holds 10001 messages"],
  [
    "tool results past the message limit",
    { ...ok, messages: [{ role: "user", content: Array.from({ length: 10_001 }, () => ({ type: "tool_result", tool_use_id: "c" })) }] },
    "messages holds 10001 messages, counting each tool_result block and the system prompt as one",
  ],
  ["10,000 turns and a system prompt", { ...ok, system: "be brief", messages: Array.from({ length: 10_000 }, () => user) }, "messages holds 10001 messages"],
  [
    "a body nested 200 deep",
    `{"model":"m","max_tokens":1,"messages":[${"[".repeat(200)}${"]".repeat(200)}]}`,
    "the request body nests objects and lists deeper than 128 levels",
  ],
];

describe("malformed Anthropic requests", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub("entries:\n  - repeat: true\n    reply: ok\n");
  });
  afterAll(() => h.close());

  it.each(malformed)("refuses %s with a 400 in Anthropic's shape naming the field", async (_what, body, message) => {
    const r = await rawRequest(h.base, "POST", "/v1/messages", body as object, { "x-modelstub-session": "malformed" });
    expect(r.status).toBe(400);
    const e = JSON.parse(String(r.body)) as { type: string; error: { type: string; message: string } };
    expect([e.type, e.error.type]).toEqual(["error", "invalid_request_error"]);
    expect(e.error.message.startsWith(message), e.error.message).toBe(true);
    expect(h.stub.episode("malformed").calls).toHaveLength(0);
  });

  it("answers the same body without the fault", async () => {
    const r = await rawRequest(h.base, "POST", "/v1/messages", ok);
    expect(r.status).toBe(200);
  });

  it("counts a turn of tool results alone as its results, as chat completions counts the same loop", async () => {
    // 1 + 3,400 x (assistant tool_use, user tool_result) = 6,801 engine messages: under the limit.
    const round = [
      { role: "assistant", content: [{ type: "tool_use", id: "c", name: "t", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c", content: "x" }] },
    ];
    const messages = [user, ...Array.from({ length: 3_400 }, () => round).flat()];
    const r = await rawRequest(h.base, "POST", "/v1/messages", { ...ok, messages }, { "x-modelstub-session": "long-loop" });
    expect(r.status, String(r.body).slice(0, 300)).toBe(200);
    expect(h.stub.episode("long-loop").calls[0]!.request!.messages).toHaveLength(6_801);
  });
});

const loopScript = `
entries:
  - reply:
      text: "Looking."
      tool_calls:
        - name: bash
          arguments: { command: "ls {{last_user}}" }
  - match: { tool_result: bash }
    reply: "Found: {{last_tool_result}}"
`;

describe("a tool loop over Anthropic Messages and over chat completions", () => {
  it("records byte-identical episodes", async () => {
    const tools = {
      anthropic: [{ name: "bash", description: "Runs a command.", input_schema: bashSchema }],
      chat: [{ type: "function" as const, function: { name: "bash", description: "Runs a command.", parameters: bashSchema } }],
    };
    const a = await startHttpStub(loopScript);
    const c = await startHttpStub(loopScript);
    try {
      const claude = new Anthropic({ baseURL: a.base, apiKey: "x", maxRetries: 0, defaultHeaders: { "x-modelstub-session": "same" } });
      const first = await claude.messages
        .stream({ model: "m", max_tokens: 99, system: "Be terse.", tools: tools.anthropic, messages: [{ role: "user", content: "/tmp" }] })
        .finalMessage();
      const call = first.content.find((b) => b.type === "tool_use")!;
      await claude.messages.create({
        model: "m",
        max_tokens: 99,
        system: "Be terse.",
        tools: tools.anthropic,
        messages: [
          { role: "user", content: "/tmp" },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.type === "tool_use" ? call.id : "", content: "a.txt" }] },
        ],
      });
      const openai = c.client({ session: "same" });
      const system: OpenAI.ChatCompletionMessageParam = { role: "system", content: "Be terse." };
      const firstChat = (
        await openai.chat.completions
          .stream({ model: "m", max_tokens: 99, tools: tools.chat, messages: [system, { role: "user", content: "/tmp" }] })
          .finalChatCompletion()
      ).choices[0]!.message;
      const chatCall = firstChat.tool_calls![0]!;
      await openai.chat.completions.create({
        model: "m",
        max_tokens: 99,
        tools: tools.chat,
        messages: [
          system,
          { role: "user", content: "/tmp" },
          { role: "assistant", content: firstChat.content, tool_calls: firstChat.tool_calls },
          { role: "tool", tool_call_id: chatCall.id, content: "a.txt" },
        ],
      });
      const overAnthropic = Buffer.from(a.stub.episodeBytes("same"));
      expect(a.stub.episode("same").calls).toHaveLength(2);
      expect(overAnthropic.equals(Buffer.from(c.stub.episodeBytes("same")))).toBe(true);
    } finally {
      await a.close();
      await c.close();
    }
  });
});
