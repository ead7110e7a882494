import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { MessageSchema, Role, ToolCallSchema, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/engine/load-script.js";
import { Code } from "../../src/engine/status-code.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import type { ModelPort } from "../../src/port/model-port.js";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function grpcPort(script: string): Promise<ModelPort> {
  server = await startStubServer(script);
  return server.port;
}

function inProcess(script: string): ModelPort {
  return createInProcessPort(createStub({ script: loadScriptText(script, "test.yaml") }));
}

const text = async (p: Promise<{ message?: { content: string } | undefined }>) => (await p).message?.content;

function toolTurn(user: string, tool: string, output: string, callId = "c1"): GenerateRequest {
  return userRequest(user, {
    messages: [
      create(MessageSchema, { role: Role.USER, content: user }),
      create(MessageSchema, { role: Role.ASSISTANT, toolCalls: [create(ToolCallSchema, { id: callId, name: tool, arguments: "{}" })] }),
      create(MessageSchema, { role: Role.TOOL, content: output, toolCallId: callId }),
    ],
  });
}

const twoSteps = `
entries:
  - reply: main-1
steps:
  plan:
    - reply: plan-1
    - reply: plan-2
    - reply: plan-3
  act:
    - reply: act-1
    - reply: act-2
`;

describe("step-keyed lists", () => {
  it("advance independently of each other and of the main list", async () => {
    const port = await grpcPort(twoSteps);
    expect(await text(port.generate(userRequest("x"), { step: "plan" }))).toBe("plan-1");
    expect(await text(port.generate(userRequest("x", { stepId: "act" })))).toBe("act-1");
    expect(await text(port.generate(userRequest("x")))).toBe("main-1");
    expect(await text(port.generate(userRequest("x"), { step: "plan" }))).toBe("plan-2");
    expect(await text(port.generate(userRequest("x", { stepId: "act" })))).toBe("act-2");
  });

  it("give the same answers interleaved as one after the other", async () => {
    const port = await grpcPort(twoSteps);
    // Two sessions of one server: each keeps its own place in each list.
    const answersByStep = async (session: string, steps: string[]) => {
      const out: Record<string, (string | undefined)[]> = {};
      for (const step of steps) (out[step] ??= []).push(await text(port.generate(userRequest("x"), { step, session })));
      return out;
    };
    const interleaved = await answersByStep("interleaved", ["plan", "act", "plan", "act", "plan"]);
    const oneAfterTheOther = await answersByStep("one-after-the-other", ["plan", "plan", "plan", "act", "act"]);
    expect(interleaved).toEqual(oneAfterTheOther);
    expect(interleaved).toEqual({ plan: ["plan-1", "plan-2", "plan-3"], act: ["act-1", "act-2"] });
  });

  it("answers NOT_FOUND with a hint for an unknown step", async () => {
    const port = inProcess(twoSteps);
    await expect(port.generate(userRequest("x"), { step: "plna" })).rejects.toMatchObject({
      code: Code.NOT_FOUND,
      details: 'the script has no step "plna" (did you mean "plan"?); its steps are: plan, act',
    });
  });

  it("rejects a request whose step_id and x-modelstub-step disagree", async () => {
    const port = await grpcPort(twoSteps);
    await expect(port.generate(userRequest("x", { stepId: "plan" }), { step: "act" })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: 'the request\'s step_id "plan" and metadata x-modelstub-step "act" disagree; send one of them',
    });
  });

  it("says which step ran out and how many entries it served", async () => {
    const port = inProcess(twoSteps);
    await port.generate(userRequest("x"), { step: "act" });
    await port.generate(userRequest("x"), { step: "act" });
    await expect(port.generate(userRequest("x"), { step: "act" })).rejects.toMatchObject({
      code: Code.FAILED_PRECONDITION,
      details: "steps.act ran out: it served its 2 entries (2 calls); add entries, or set on_exhausted: repeat-last or cycle on this list",
    });
  });
});

describe("matchers", () => {
  const script = `
entries:
  - match: { contains: weather }
    repeat: true
    reply: sunny
  - match: { regex: 'open (?<file>\\S+) at line (\\d+)' }
    repeat: true
    reply: "opening {{match.file}} at {{match.2}}"
  - match: { contains: HELLO, ignore_case: true }
    repeat: true
    reply: hi
  - match: { model: big-model }
    repeat: true
    reply: big
  - match: { tool_result: bash }
    repeat: true
    reply: "bash said: {{last_tool_result}}"
  - match: { tool_result: true }
    repeat: true
    reply: "some tool said: {{last_tool_result}}"
  - match: { turn: 0 }
    repeat: true
    reply: "first turn of step {{step}} in {{session}} with {{model}}"
  - repeat: true
    reply: "turn {{turn}}: you said {{last_user}}"
`;

  it("match every kind of condition, first match wins in file order", async () => {
    const port = await grpcPort(script);
    expect(await text(port.generate(userRequest("what is the weather? hello")))).toBe("sunny");
    expect(await text(port.generate(userRequest("please open src/a.ts at line 42")))).toBe("opening src/a.ts at 42");
    expect(await text(port.generate(userRequest("well, hello there")))).toBe("hi");
    expect(await text(port.generate(userRequest("anything", { model: "big-model" })))).toBe("big");
    expect(await text(port.generate(toolTurn("run it", "bash", "/home/me")))).toBe("bash said: /home/me");
    expect(await text(port.generate(toolTurn("read it", "read", "contents")))).toBe("some tool said: contents");
    expect(await text(port.generate(userRequest("first"), { step: "", session: "s1" }))).toBe("first turn of step  in s1 with test-model");
    const later = userRequest("again", {
      messages: [
        create(MessageSchema, { role: Role.USER, content: "first" }),
        create(MessageSchema, { role: Role.ASSISTANT, content: "ok" }),
        create(MessageSchema, { role: Role.USER, content: "again" }),
      ],
    });
    expect(await text(port.generate(later))).toBe("turn 1: you said again");
  });

  it("match tool_result: false only when the last message is not a tool result, and a regex with ignore_case in any case", async () => {
    const port = await grpcPort(`
entries:
  - match: { regex: '^open (\\w+)$', ignore_case: true }
    repeat: true
    reply: "opening {{match.1}}"
  - match: { tool_result: false }
    repeat: true
    reply: not a tool result
  - repeat: true
    reply: a tool result
`);
    expect(await text(port.generate(userRequest("OPEN Readme")))).toBe("opening Readme");
    expect(await text(port.generate(userRequest("please open it")))).toBe("not a tool result");
    expect(await text(port.generate(toolTurn("OPEN Readme", "bash", "/home/me")))).toBe("opening Readme");
    expect(await text(port.generate(toolTurn("run it", "bash", "/home/me")))).toBe("a tool result");
  });

  it("answers NOT_FOUND with a summary of the request and the nearest candidates on a miss", async () => {
    const port = inProcess(`
entries:
  - match: { contains: weather }
    reply: a
  - match: { contains: weather, turn: 3 }
    reply: b
  - match: { model: other }
    reply: c
`);
    await expect(port.generate(userRequest("tell me a joke"))).rejects.toMatchObject({
      code: Code.NOT_FOUND,
      details:
        'no entry of entries matches the request (model "test-model", turn 0, last user message "tell me a joke"); nearest: entries[0] (wants last user message contains "weather"); entries[2] (wants model is "other"); entries[1] (wants last user message contains "weather" and turn is 3)',
    });
  });

  it("spends a limited entry after `times` uses and never spends a repeating one", async () => {
    const port = inProcess(`
entries:
  - times: 2
    reply: twice
  - repeat: true
    reply: forever
`);
    const got = [];
    for (let i = 0; i < 5; i++) got.push(await text(port.generate(userRequest("x"))));
    expect(got).toEqual(["twice", "twice", "forever", "forever", "forever"]);
  });
});

describe("on_exhausted", () => {
  it("repeat-last keeps answering with the last entry", async () => {
    const port = await grpcPort(`
entries:
  on_exhausted: repeat-last
  entries:
    - reply: one
    - reply: two
`);
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await text(port.generate(userRequest("x"))));
    expect(got).toEqual(["one", "two", "two", "two"]);
  });

  it("cycle starts the list over", async () => {
    const port = await grpcPort(`
steps:
  loop:
    on_exhausted: cycle
    entries:
      - reply: one
      - reply: two
`);
    const got = [];
    for (let i = 0; i < 5; i++) got.push(await text(port.generate(userRequest("x"), { step: "loop" })));
    expect(got).toEqual(["one", "two", "one", "two", "one"]);
  });
});

describe("templates", () => {
  it("quote the last tool result verbatim and substitute captures into tool-call arguments as JSON", async () => {
    const port = inProcess(`
entries:
  - match: { regex: 'cat (\\S+)' }
    reply:
      tool_calls:
        - name: read
          arguments: { path: "{{match.1}}", note: "user said {{last_user}}" }
  - reply: "{{last_tool_result}}"
`);
    const first = await port.generate(userRequest('cat "quoted".txt'));
    expect(first.message?.toolCalls[0]?.arguments).toBe(JSON.stringify({ path: '"quoted".txt', note: 'user said cat "quoted".txt' }));
    const output = "line 1\n  {{not a template}}\t\"tabs\"\n";
    const second = await port.generate(toolTurn("x", "read", output));
    expect(second.message?.content).toBe(output);
  });

  it("JSON-escape values filled into tool-call arguments written as a JSON text, so they stay valid JSON", async () => {
    const port = await grpcPort(`
entries:
  - match: { regex: 'cat (.+)' }
    reply:
      tool_calls:
        - name: read
          arguments: '{"path": "{{match.1}}", "asked": "{{last_user}}"}'
`);
    const user = 'cat a"b\\c.txt\nand then\ttab';
    const res = await port.generate(userRequest(user));
    const args = res.message!.toolCalls[0]!.arguments;
    expect(args).toBe(`{"path": ${JSON.stringify('a"b\\c.txt')}, "asked": ${JSON.stringify(user)}}`);
    expect(JSON.parse(args)).toEqual({ path: 'a"b\\c.txt', asked: user });
  });

  it("bound their output", async () => {
    const port = inProcess(`
entries:
  - reply: "{{last_user}}{{last_user}}"
`);
    await expect(port.generate(userRequest("x".repeat(600_000)))).rejects.toMatchObject({ code: Code.RESOURCE_EXHAUSTED });
  });

  it("bound the whole rendered reply, not each template alone", async () => {
    const port = await grpcPort(`
entries:
  - repeat: true
    reply:
      tool_calls:
        - name: echo
          arguments: { a: "{{last_user}}", b: "{{last_user}}", c: "{{last_user}}", d: "{{last_user}}" }
`);
    // Four copies of 200,000 characters fit in the 1 MiB bound; four of 300,000 do not,
    // though each copy alone would.
    const fits = await port.generate(userRequest("x".repeat(200_000)));
    expect(fits.message!.toolCalls[0]!.arguments.length).toBeGreaterThan(800_000);
    await expect(port.generate(userRequest("x".repeat(300_000)))).rejects.toMatchObject({
      code: Code.RESOURCE_EXHAUSTED,
      details: "the reply's templates rendered over 1048576 bytes (the bound on a rendered reply)",
    });
  });
});

describe("replies", () => {
  it("compute usage by the documented rule when not given: one token per 4 UTF-8 bytes, rounded up", async () => {
    const port = inProcess(`
entries:
  - reply: { text: "12345", tool_calls: [ { name: ab, arguments: { k: v } } ] }
`);
    // input: "hello world" is 11 bytes -> 3; output: "12345" 2 + "ab" 1 + '{"k":"v"}' 9 bytes -> 3.
    const res = await port.generate(userRequest("hello world"));
    expect([res.usage?.inputTokens, res.usage?.outputTokens, res.usage?.totalTokens]).toEqual([3, 6, 9]);
  });

  it("chunk streams by explicit chunks, by words and by N characters", async () => {
    const port = inProcess(`
entries:
  - reply: { text: "Hello brave new world", chunks: ["Hel", "lo brave ", "new world"] }
  - reply: "Hello brave  new world"
  - reply: { text: "héllo😀wörld", chunking: { chars: 3 } }
`);
    const deltas = async () => {
      const out: string[] = [];
      for await (const f of port.generateStream(userRequest("x"))) if (f.frame.case === "textDelta") out.push(f.frame.value);
      return out;
    };
    expect(await deltas()).toEqual(["Hel", "lo brave ", "new world"]);
    expect(await deltas()).toEqual(["Hello ", "brave  ", "new ", "world"]);
    expect(await deltas()).toEqual(["hél", "lo😀", "wör", "ld"]);
  });
});
