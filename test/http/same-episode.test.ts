import { create } from "@bufbuild/protobuf";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { GenerateRequestSchema, MessageSchema, Role, SamplingParamsSchema, ToolCallSchema, ToolSchema } from "../../gen/modelstub/v1/model_pb.js";
import { collect } from "../support/requests.js";
import { startStubServer } from "../support/start-stub-server.js";
import { startHttpStub } from "./http-stub.js";

const script = `
entries:
  - reply: "first, plainly"
  - latency: { first_byte: 300ms, per_chunk: 1100ms }
    reply:
      text: "Looking."
      tool_calls:
        - name: bash
          arguments: { command: "ls {{last_user}}" }
  - reply: "Found: {{last_tool_result}}"
  - error: { code: RESOURCE_EXHAUSTED, message: "slow down", trailers: { retry-after-ms: "250" } }
  - reply: "one two three"
    break: { after_chunks: 1, then: drop }
  - reply: "four five six"
    break: { after_chunks: 2, then: error, error: { code: INTERNAL, message: "boom" } }
steps:
  plan:
    - reply: "the plan"
`;

const bashParameters = { type: "object", properties: { command: { type: "string" } }, required: ["command"] };

/** The conversation, as OpenAI chat-completions bodies. */
const system: OpenAI.ChatCompletionMessageParam = { role: "developer", content: "You are terse." };
const user: OpenAI.ChatCompletionMessageParam = {
  role: "user",
  content: [
    { type: "text", text: "list " },
    { type: "text", text: "/tmp" },
  ],
};
const assistant: OpenAI.ChatCompletionMessageParam = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call-1", type: "function", function: { name: "bash", arguments: '{"command":"ls /tmp"}' } }],
};
const toolResult: OpenAI.ChatCompletionMessageParam = { role: "tool", tool_call_id: "call-1", content: "a.txt b.txt" };
const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "bash", description: "Runs a command.", parameters: bashParameters } }];

/** The same conversation, as a gRPC client writes it. */
const g = {
  system: create(MessageSchema, { role: Role.SYSTEM, content: "You are terse." }),
  user: create(MessageSchema, { role: Role.USER, content: "list /tmp" }),
  assistant: create(MessageSchema, {
    role: Role.ASSISTANT,
    toolCalls: [create(ToolCallSchema, { id: "call-1", name: "bash", arguments: '{"command":"ls /tmp"}' })],
  }),
  tool: create(MessageSchema, { role: Role.TOOL, toolCallId: "call-1", content: "a.txt b.txt" }),
  tools: [create(ToolSchema, { name: "bash", description: "Runs a command.", parametersJson: JSON.stringify(bashParameters) })],
};

async function overHttp(): Promise<Uint8Array> {
  const h = await startHttpStub(script);
  try {
    const client = h.client({ session: "same" });
    const settle = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        () => "failed",
      );
    const drain = async (p: Promise<AsyncIterable<unknown>>) => {
      for await (const _ of await p);
    };
    await client.chat.completions.create({ model: "m1", messages: [system, user], temperature: 0.25, max_tokens: 64, stop: "END", seed: 7 });
    await drain(client.chat.completions.create({ model: "m1", messages: [system, user], tools, stream: true, stream_options: { include_usage: true } }));
    await client.chat.completions.create({ model: "m1", messages: [system, user, assistant, toolResult], tools, top_p: 0.5 });
    expect(await settle(client.chat.completions.create({ model: "m1", messages: [user] }))).toBe("failed");
    expect(await settle(drain(client.chat.completions.create({ model: "m1", messages: [user], stream: true })))).toBe("failed");
    expect(await settle(drain(client.chat.completions.create({ model: "m1", messages: [user], stream: true })))).toBe("failed");
    expect(await settle(client.chat.completions.create({ model: "m1", messages: [user] }))).toBe("failed");
    await h.client({ session: "same", step: "plan" }).chat.completions.create({ model: "m2", messages: [user], max_completion_tokens: 9 });
    expect(h.stub.episode("same").calls.map((c) => c.outcome)).toEqual([
      Outcome.OK,
      Outcome.OK,
      Outcome.OK,
      Outcome.ERROR,
      Outcome.STREAM_BROKEN,
      Outcome.STREAM_BROKEN,
      Outcome.ERROR,
      Outcome.OK,
    ]);
    return h.stub.episodeBytes("same");
  } finally {
    await h.close();
  }
}

async function overGrpc(): Promise<Uint8Array> {
  const s = await startStubServer(script, { clock: "virtual" });
  try {
    const o = { session: "same" };
    const req = (init: Parameters<typeof create<typeof GenerateRequestSchema>>[1]) => create(GenerateRequestSchema, init);
    await s.port.generate(
      req({ model: "m1", messages: [g.system, g.user], sampling: create(SamplingParamsSchema, { temperature: 0.25, maxTokens: 64, stop: ["END"], seed: 7n }) }),
      o,
    );
    await collect(s.port.generateStream(req({ model: "m1", messages: [g.system, g.user], tools: g.tools }), o));
    await s.port.generate(
      req({ model: "m1", messages: [g.system, g.user, g.assistant, g.tool], tools: g.tools, sampling: create(SamplingParamsSchema, { topP: 0.5 }) }),
      o,
    );
    await s.port.generate(req({ model: "m1", messages: [g.user] }), o).catch(() => undefined);
    await collect(s.port.generateStream(req({ model: "m1", messages: [g.user] }), o));
    await collect(s.port.generateStream(req({ model: "m1", messages: [g.user] }), o));
    await s.port.generate(req({ model: "m1", messages: [g.user] }), o).catch(() => undefined);
    await s.port.generate(req({ model: "m2", messages: [g.user], sampling: create(SamplingParamsSchema, { maxTokens: 9 }) }), { ...o, step: "plan" });
    return s.stub.episodeBytes("same");
  } finally {
    await s.close();
  }
}

describe("one script over HTTP and over gRPC", () => {
  it("records byte-identical episodes for the same conversation", async () => {
    const http = await overHttp();
    const grpc = await overGrpc();
    expect(http.length).toBeGreaterThan(500);
    expect(Buffer.from(http).equals(Buffer.from(grpc))).toBe(true);
  });
});
