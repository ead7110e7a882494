import OpenAI from "openai";
import type { FakeAnswer } from "../support/fake-openai-upstream.js";

/**
 * A five-turn tool-using conversation, as the upstream answers it: a streamed plan with a tool
 * call, a 429 the client retries, a unary tool call, a 503 on a stream the client retries, a
 * streamed answer, and a unary summary cut at the length limit.
 */
export const upstreamAnswers: FakeAnswer[] = [
  {
    kind: "sse",
    deltas: [
      { content: "Let me " },
      { content: "look at a.md." },
      { tool_calls: [{ index: 0, id: "call_UP1", type: "function", function: { name: "read", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"a.md","api_key":"k-123"}' } }] },
    ],
    finish: "tool_calls",
    usage: { prompt_tokens: 20, completion_tokens: 9 },
  },
  {
    kind: "error",
    status: 429,
    message: "Rate limit reached for requests",
    headers: { "retry-after": "1", "retry-after-ms": "1000", "x-secret-header": "nope" },
  },
  {
    kind: "json",
    message: { content: null, tool_calls: [{ id: "call_UP2", type: "function", function: { name: "bash", arguments: '{"command": "ls -1"}' } }] },
    finish: "tool_calls",
    usage: { prompt_tokens: 40, completion_tokens: 12 },
  },
  { kind: "error", status: 503, message: "The server is overloaded (key sk-test-SECRET)" },
  { kind: "sse", deltas: [{ content: "Both files " }, { content: "look {fine}." }], finish: "stop", usage: { prompt_tokens: 60, completion_tokens: 4 } },
  { kind: "json", message: { content: "Summary: all good, and" }, finish: "length", usage: { prompt_tokens: 70, completion_tokens: 5 } },
];

/** What the client saw of one call: the completion, the stream's chunks, or the error. */
export type Seen = { completion: unknown } | { chunks: unknown[] } | { error: { status: number | undefined; message: string; retryAfter: string | null } };

async function seen<T>(p: Promise<T>, stream: boolean): Promise<{ seen: Seen; value: T | undefined }> {
  try {
    const value = await p;
    if (!stream) return { seen: { completion: value }, value };
    const chunks: unknown[] = [];
    for await (const c of value as AsyncIterable<unknown>) chunks.push(c);
    return { seen: { chunks }, value: chunks as T };
  } catch (err) {
    const e = err as InstanceType<typeof OpenAI.APIError>;
    return { seen: { error: { status: e.status, message: e.message, retryAfter: e.headers?.get("retry-after") ?? null } }, value: undefined };
  }
}

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The tool calls of a stream, assembled from its deltas. */
function toolCallsOf(chunks: Chunk[]): OpenAI.Chat.Completions.ChatCompletionMessageToolCall[] {
  const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
  for (const c of chunks) {
    for (const t of c.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[t.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      if (t.id) call.id = t.id;
      call.function.name += t.function?.name ?? "";
      call.function.arguments += t.function?.arguments ?? "";
    }
  }
  return calls;
}

/**
 * Drives the conversation through an OpenAI client at `baseURL` (the recorder, or a server
 * replaying its script), retrying each failed call once as an agent would, and returns what the
 * client saw of every call. Steps go in the x-modelstub-step header; the last call names none.
 */
export async function driveConversation(baseURL: string): Promise<Seen[]> {
  const client = new OpenAI({ baseURL, apiKey: "client-side-key", maxRetries: 0 });
  const out: Seen[] = [];
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    { type: "function", function: { name: "read", parameters: { type: "object", properties: { path: { type: "string" } } } } },
    { type: "function", function: { name: "bash", description: "Run a command", parameters: { type: "object" } } },
  ];
  const messages: Message[] = [
    { role: "system", content: "You are a careful agent." },
    { role: "user", content: "Check a.md and the folder." },
  ];
  const step = (s: string) => ({ headers: { "x-modelstub-step": s } });
  const plan = await seen(
    client.chat.completions.create({ model: "gpt-test", messages, tools, stream: true, stream_options: { include_usage: true } }, step("plan")),
    true,
  );
  out.push(plan.seen);
  const planChunks = (plan.value ?? []) as unknown as Chunk[];
  const planCalls = toolCallsOf(planChunks);
  messages.push({ role: "assistant", content: planChunks.map((c) => c.choices[0]?.delta.content ?? "").join(""), tool_calls: planCalls });
  messages.push({ role: "tool", tool_call_id: planCalls[0]?.id ?? "", content: "# a.md\nall fine\n" });
  let act: Awaited<ReturnType<typeof seen<OpenAI.Chat.Completions.ChatCompletion>>>;
  do {
    act = await seen(client.chat.completions.create({ model: "gpt-test", messages, tools, temperature: 0 }, step("act")), false);
    out.push(act.seen);
  } while (!act.value && out.length < 4);
  const actMessage = act.value!.choices[0]!.message;
  messages.push({ role: "assistant", content: actMessage.content, tool_calls: actMessage.tool_calls });
  messages.push({ role: "tool", tool_call_id: actMessage.tool_calls?.[0]?.id ?? "", content: "a.md\nb.md\n" });
  let answer: Awaited<ReturnType<typeof seen<Chunk[]>>>;
  const before = out.length;
  do {
    answer = (await seen(
      client.chat.completions.create({ model: "gpt-test", messages, tools, stream: true, stream_options: { include_usage: true } }, step("act")),
      true,
    )) as typeof answer;
    out.push(answer.seen);
  } while (!answer.value && out.length < before + 2);
  messages.push({ role: "assistant", content: (answer.value ?? []).map((c) => c.choices[0]?.delta.content ?? "").join("") });
  messages.push({ role: "user", content: "Summarize." });
  out.push((await seen(client.chat.completions.create({ model: "gpt-test", messages }), false)).seen);
  return out;
}
