import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

const tools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "bash", parameters: { type: "object", properties: { command: { type: "string" } } } } },
  { type: "function", function: { name: "read", parameters: { type: "object", properties: { path: { type: "string" } } } } },
];

/** Runs a tool-calling probe the way an agent harness does: call, run the tool, answer with its output. */
async function toolProbe(client: OpenAI, prompt: string, output: string, stream: boolean) {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: prompt }];
  const first = stream
    ? await client.chat.completions.stream({ model: "modelstub-default", messages, tools }).finalChatCompletion()
    : await client.chat.completions.create({ model: "modelstub-default", messages, tools });
  const message = first.choices[0]!.message;
  const call = message.tool_calls![0]!;
  if (call.type !== "function") throw new Error("expected a function call");
  messages.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls! }, { role: "tool", tool_call_id: call.id, content: output });
  const second = await client.chat.completions.create({ model: "modelstub-default", messages, tools });
  return { call: call.function, finish: first.choices[0]!.finish_reason, answer: second.choices[0]!.message.content };
}

describe("the default script's probes over HTTP", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(undefined);
  });
  afterAll(() => h.close());

  it("PROBE-PWD calls bash with pwd, then quotes the tool's output verbatim", async () => {
    const r = await toolProbe(h.client({ session: "pwd" }), "PROBE-PWD where are you?", "/home/agent/work\n", true);
    expect(r).toEqual({ call: { name: "bash", arguments: '{"command":"pwd"}' }, finish: "tool_calls", answer: "/home/agent/work\n" });
  });

  it("PROBE-READ <path> calls read on that path, then quotes the file", async () => {
    const r = await toolProbe(h.client({ session: "read" }), "PROBE-READ /etc/hostname please", "box-7", false);
    expect(r).toEqual({ call: { name: "read", arguments: '{"path":"/etc/hostname"}' }, finish: "tool_calls", answer: "box-7" });
  });

  it("PROBE-ECHO answers once, with the user's words", async () => {
    const c = await h
      .client({ session: "echo" })
      .chat.completions.create({ model: "modelstub-default", messages: [{ role: "user", content: "PROBE-ECHO hi" }] });
    expect(c.choices[0]!.message.content).toBe("PROBE-ECHO ok: PROBE-ECHO hi");
  });

  it("PROBE-SLOW streams word by word and reassembles to the whole reply", async () => {
    const stream = await h
      .client({ session: "slow" })
      .chat.completions.create({ model: "modelstub-default", messages: [{ role: "user", content: "PROBE-SLOW" }], stream: true });
    const words: string[] = [];
    for await (const c of stream) if (c.choices[0]?.delta.content) words.push(c.choices[0].delta.content);
    expect(words.length).toBeGreaterThan(20);
    expect(words.join("")).toMatch(/^This reply is deliberately slow\. .* executor recovers\.$/);
  });

  it("PROBE-NOCHANGE claims the work is done, and anything else gets the help text", async () => {
    const client = h.client({ session: "misc" });
    const done = await client.chat.completions.create({ model: "modelstub-default", messages: [{ role: "user", content: "PROBE-NOCHANGE src/a.ts" }] });
    expect(done.choices[0]!.message.content).toBe("Done. I have finished the task: src/a.ts is updated and everything is complete.");
    const help = await client.chat.completions.create({ model: "modelstub-default", messages: [{ role: "user", content: "hello?" }] });
    expect(help.choices[0]!.message.content).toMatch(/^modelstub default script\. Put one of these markers/);
  });

  it("PROBE-NOCHANGE claims the work again, with no tool call, on each turn a completion check rejects the claim", async () => {
    const client = h.client({ session: "nochange" });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "PROBE-NOCHANGE src/a.ts" }];
    const claims: (string | null)[] = [];
    // The harness's completion check: git diff is empty, so each claim is rejected in a new user message, up to its limit.
    for (let rejection = 0; rejection < 3; rejection++) {
      const turn = await client.chat.completions.create({ model: "modelstub-default", messages, tools });
      expect(turn.choices[0]!.message.tool_calls ?? []).toEqual([]);
      expect(turn.choices[0]!.finish_reason).toBe("stop");
      claims.push(turn.choices[0]!.message.content);
      messages.push(
        { role: "assistant", content: turn.choices[0]!.message.content },
        { role: "user", content: "Rejected: nothing changed (git diff is empty). Make the change, then say done." },
      );
    }
    expect(claims).toEqual([
      "Done. I have finished the task: src/a.ts is updated and everything is complete.",
      "Done. I have checked again: the task is finished and everything is complete.",
      "Done. I have checked again: the task is finished and everything is complete.",
    ]);
    expect(h.stub.episode("nochange").calls.map((c) => c.entry)).toEqual(["entries[6]", "entries[7]", "entries[7]"]);
  });

  it("lists the default script's model in both model lists", async () => {
    expect((await h.client().models.list()).data.map((m) => m.id)).toEqual(["modelstub-default"]);
    const catalog = JSON.parse(String((await rawRequest(h.base, "GET", "/models?output_modalities=all")).body));
    expect(catalog.data.map((m: { id: string; name: string; context_length: number }) => [m.id, m.name, m.context_length])).toEqual([
      ["modelstub-default", "modelstub default script", 128000],
    ]);
  });
});
