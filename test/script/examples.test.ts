import { readFile, readdir } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { FinishReason, GenerateRequestSchema, MessageSchema, Role, type GenerateResponse, type Message } from "../../gen/modelstub/v1/model_pb.js";
import { defaultScriptText } from "../../src/script/default-script.js";
import { Code, loadScriptFile, type ModelCallError } from "../../src/index.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

/*
 * Every script in examples/ loads, and is driven through the real gRPC server on a virtual
 * clock, so the examples docs/script.md points at keep doing what their comments say.
 */

const examples = new URL("../../examples/", import.meta.url);
const read = (name: string) => readFile(new URL(name, examples), "utf8");

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const serve = async (name: string) => (server = await startStubServer(await read(name), { clock: "virtual" }));

const user = (content: string) => create(MessageSchema, { role: Role.USER, content });
const assistantOf = (res: GenerateResponse) => res.message!;
const toolResult = (call: { id: string; name: string }, content: string) => create(MessageSchema, { role: Role.TOOL, content, toolCallId: call.id, name: "" });
const calls = (res: GenerateResponse) => res.message!.toolCalls.map((c) => [c.id, c.name, c.arguments]);
const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("the call succeeded"),
    (e: ModelCallError) => e,
  );
const textDeltas = (frames: { frame: { case?: string | undefined; value?: unknown } }[]) =>
  frames.flatMap((f) => (f.frame.case === "textDelta" ? [f.frame.value as string] : []));
const declared = (s: StubServer, session: string) => s.stub.episode(session).calls.map((c) => [Number(c.startMs), Number(c.endMs)]);

/** The files at the top of examples/: scripts (its folders hold client and container projects). */
const scriptFiles = async () =>
  (await readdir(examples, { withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .sort();

/** The examples each test below drives; a new example without a test fails the first test. */
const driven = ["branching-agent.yaml", "default.yaml", "failures.yaml", "hello.yaml", "regex-captures.json", "retry-story.yaml", "streaming.yaml"];

describe("examples/", () => {
  it("holds at its top level only scripts that load, each driven by a test here (folders hold client and container projects)", async () => {
    const files = await scriptFiles();
    expect(files).toEqual(driven);
    for (const f of files) await expect(loadScriptFile(`examples/${f}`)).resolves.toMatchObject({ entryCount: expect.any(Number) });
  });

  it("keeps default.yaml byte-equal to the built-in default script", async () => {
    expect(await read("default.yaml")).toBe(defaultScriptText);
  });

  it("hello.yaml answers once, then says the list ran out", async () => {
    const s = await serve("hello.yaml");
    expect((await s.port.generate(userRequest("hi"), { session: "h" })).message?.content).toBe("Hello! How can I help?");
    const err = await failure(s.port.generate(userRequest("again"), { session: "h" }));
    expect([err.code, err.details]).toEqual([
      Code.FAILED_PRECONDITION,
      "entries ran out: it served its 1 entry (1 call); add entries, or set on_exhausted: repeat-last or cycle on this list",
    ]);
  });

  it("default.yaml runs the PROBE-PWD tool round trip and quotes the tool output", async () => {
    const s = await serve("default.yaml");
    const ask = user("PROBE-PWD please");
    const first = await s.port.generate(create(GenerateRequestSchema, { model: "m", messages: [ask] }), { session: "d" });
    expect(calls(first)).toEqual([["call-d-1-0", "bash", '{"command":"pwd"}']]);
    const messages = [ask, assistantOf(first), toolResult(first.message!.toolCalls[0]!, "/home/agent\n")];
    const second = await s.port.generate(create(GenerateRequestSchema, { model: "m", messages }), { session: "d" });
    expect(second.message?.content).toBe("/home/agent\n");
  });

  describe("branching-agent.yaml", () => {
    it("runs plan -> read -> bash -> edit -> bash -> done -> summary, branching on which tool answered", async () => {
      const s = await serve("branching-agent.yaml");
      const session = "agent";
      const messages: Message[] = [user("Please fix the bug in src/math.ts")];
      const step = async (stepId: string) => {
        const res = await s.port.generate(create(GenerateRequestSchema, { model: "agent-stub", messages: [...messages] }), { session, step: stepId });
        messages.push(assistantOf(res));
        return res;
      };
      const answer = (res: GenerateResponse, output: string) => messages.push(toolResult(res.message!.toolCalls[0]!, output));

      const plan = await step("plan");
      expect(plan.message?.content).toBe("Plan: read src/math.ts, run the tests, patch the bug, run the tests again.");
      expect(calls(plan)).toEqual([["call-agent-1-0", "read", '{"path":"src/math.ts"}']]);
      expect(plan.finishReason).toBe(FinishReason.TOOL_CALLS);
      answer(plan, "export const add = (a, b) => a - b;");

      const afterRead = await step("act");
      expect(afterRead.message?.content).toBe("src/math.ts begins: export const add = (a, b) => a - b;");
      expect(calls(afterRead)).toEqual([["call-agent-2-0", "bash", '{"command":"npm test"}']]);
      answer(afterRead, "FAIL add(1, 2): expected 3, got -1");

      const afterFail = await step("act");
      expect(afterFail.message?.content).toBe("The tests say: FAIL add(1, 2): expected 3, got -1. Patching.");
      expect(calls(afterFail)).toEqual([["call-agent-3-0", "edit", '{"path":"src/math.ts","find":"a - b","replace":"a + b"}']]);
      answer(afterFail, "patched src/math.ts");

      const afterEdit = await step("act");
      expect(afterEdit.message?.content).toBe("");
      expect(calls(afterEdit)).toEqual([["call-agent-4-0", "bash", '{"command":"npm test"}']]);
      answer(afterEdit, "PASS 1 test");

      // The second bash result: the first bash entry is spent, so the finishing one answers.
      const done = await step("act");
      expect(done.message?.content).toBe("Fixed. The tests now say: PASS 1 test");
      expect(done.message?.toolCalls).toEqual([]);
      expect(done.finishReason).toBe(FinishReason.STOP);

      const summary = await step("summarize");
      expect(summary.message?.content).toBe("Summary for turn 5: fixed src/math.ts; last tool output: PASS 1 test");
      expect([summary.usage?.inputTokens, summary.usage?.outputTokens]).toEqual([120, 16]);
      expect(s.stub.episode(session).calls.map((c) => `${c.stepId} ${c.entry}`)).toEqual([
        "plan steps.plan[0]",
        "act steps.act[0]",
        "act steps.act[1]",
        "act steps.act[2]",
        "act steps.act[3]",
        "summarize steps.summarize[0]",
      ]);
    });

    it("branches to a help reply when the ask names no file, and misses in act without a tool result", async () => {
      const s = await serve("branching-agent.yaml");
      const help = await s.port.generate(userRequest("hello"), { session: "lost", step: "plan" });
      expect(help.message?.content).toBe("I can fix a bug for you. Say: fix the bug in <file>.");
      const miss = await failure(s.port.generate(userRequest("hello"), { session: "lost", step: "act" }));
      expect(miss.code).toBe(Code.NOT_FOUND);
      expect(miss.details).toBe(
        'no entry of steps.act matches the request (model "test-model", turn 0, last user message "hello"); nearest: ' +
          'steps.act[0] (wants last message is a result of tool "read"); steps.act[1] (wants last message is a result of tool "bash"); ' +
          'steps.act[2] (wants last message is a result of tool "edit")',
      );
    });
  });

  it("retry-story.yaml fails twice with UNAVAILABLE and retry-after-ms, then answers", async () => {
    const s = await serve("retry-story.yaml");
    for (let i = 0; i < 2; i++) {
      const err = await failure(s.port.generate(userRequest("q"), { session: "r" }));
      expect([err.code, err.details]).toEqual([Code.UNAVAILABLE, "backend overloaded, retry later"]);
      expect(err.trailers).toContainEqual(["retry-after-ms", "250"]);
    }
    expect((await s.port.generate(userRequest("q"), { session: "r" })).message?.content).toBe("Third time lucky: here is your answer.");
    expect(declared(s, "r")).toEqual([
      [0, 20],
      [20, 40],
      [40, 40],
    ]);
  });

  it("streaming.yaml streams explicit chunks, chunking rules and per-chunk latency", async () => {
    const s = await serve("streaming.yaml");
    const stream = async (text: string) => {
      const { frames, error } = await collect(s.port.generateStream(userRequest(text), { session: "st" }));
      expect(error).toBeUndefined();
      return textDeltas(frames);
    };
    expect(await stream("explicit please")).toEqual(["Hello", ", ", "streaming ", "world!"]);
    expect(await stream("chars please")).toEqual(["abcd", "efgh", "ij"]);
    expect(await stream("whole please")).toEqual(["All in one piece."]);
    expect(await stream("anything")).toEqual(["Split ", "into ", "words ", "by ", "default."]);
    // first_byte 100 + 3 x 50; 20 chunks/s = 50 ms x 2; none; 4 x 10 ms.
    expect(declared(s, "st")).toEqual([
      [0, 250],
      [250, 350],
      [350, 350],
      [350, 390],
    ]);
    const unary = await s.port.generate(userRequest("explicit"), { session: "unary" });
    expect(unary.message?.content).toBe("Hello, streaming world!");
  });

  describe("failures.yaml", () => {
    it("ends unary calls with the scripted error, timeout and hang statuses", async () => {
      const s = await serve("failures.yaml");
      const error = await failure(s.port.generate(userRequest("FAIL-ERROR"), { session: "f" }));
      expect([error.code, error.details]).toEqual([Code.RESOURCE_EXHAUSTED, "quota exceeded, slow down"]);
      expect(error.trailers).toContainEqual(["retry-after-ms", "1000"]);
      const timeout = await failure(s.port.generate(userRequest("FAIL-TIMEOUT"), { session: "f" }));
      expect([timeout.code, timeout.details]).toEqual([Code.DEADLINE_EXCEEDED, "scripted timeout at entries[1]"]);
      // A hang lasts until the caller's deadline; on the virtual clock that is at once.
      const hang = await failure(s.port.generate(userRequest("FAIL-HANG"), { session: "f", timeoutMs: 5000 }));
      expect([hang.code, hang.details]).toEqual([Code.DEADLINE_EXCEEDED, "cut off by the caller's deadline"]);
      expect(declared(s, "f").slice(0, 2)).toEqual([
        [0, 0],
        [0, 2000],
      ]);
    });

    it("breaks streams after two chunks: with a status, by stalling to the deadline, and by dropping the link", async () => {
      const s = await serve("failures.yaml");
      const broken = async (marker: string, timeoutMs?: number) => {
        const { frames, error } = await collect(s.port.generateStream(userRequest(marker), { session: "b", ...(timeoutMs ? { timeoutMs } : {}) }));
        return { texts: textDeltas(frames), error: error as ModelCallError };
      };
      const viaError = await broken("BREAK-ERROR");
      expect(viaError.texts).toEqual(["alpha ", "beta "]);
      expect([viaError.error.code, viaError.error.details]).toEqual([Code.UNAVAILABLE, "link lost"]);
      const viaHang = await broken("BREAK-HANG", 5000);
      expect(viaHang.texts).toEqual(["alpha ", "beta "]);
      expect(viaHang.error.code).toBe(Code.DEADLINE_EXCEEDED);
      const viaDrop = await broken("BREAK-DROP");
      expect(viaDrop.texts).toEqual(["alpha ", "beta "]);
      // A reset stream reaches a grpc-js client as INTERNAL "Received RST_STREAM ...".
      expect(viaDrop.error.code).toBe(Code.INTERNAL);
    });
  });

  it("regex-captures.json fills numbered and named groups, in text and tool arguments, and cycles", async () => {
    const s = await serve("regex-captures.json");
    const weather = await s.port.generate(userRequest("What is the weather in Paris on Monday?"), { session: "rx" });
    expect(weather.message?.content).toBe("Checking the weather in Paris for Monday.");
    expect(calls(weather)).toEqual([["call-rx-1-0", "get_weather", '{"city":"Paris","day":"Monday"}']]);
    expect((await s.port.generate(userRequest("ECHO hello there"), { session: "rx" })).message?.content).toBe("hello there");
    // Both entries spent: on_exhausted: cycle gives them their uses back.
    expect((await s.port.generate(userRequest("echo again"), { session: "rx" })).message?.content).toBe("again");
  });
});
