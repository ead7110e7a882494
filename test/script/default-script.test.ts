import { create } from "@bufbuild/protobuf";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FinishReason, MessageSchema, Role, ToolSchema, type GenerateRequest, type Message } from "../../gen/modelstub/v1/model_pb.js";
import { defaultScriptText } from "../../src/script/default-script.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

const tools = [create(ToolSchema, { name: "bash", description: "Run a command" }), create(ToolSchema, { name: "read", description: "Read a file" })];

function conversation(messages: Message[]): GenerateRequest {
  return userRequest("", { messages, tools });
}

describe("the built-in default script", () => {
  let s: StubServer;
  beforeAll(async () => {
    s = await startStubServer(defaultScriptText);
  });
  afterAll(() => s.close());

  it("is the same text as examples/default.yaml", async () => {
    expect(await readFile(new URL("../../examples/default.yaml", import.meta.url), "utf8")).toBe(defaultScriptText);
  });

  for (const [marker, tool, args, output] of [
    ["PROBE-PWD", "bash", { command: "pwd" }, "/workspace/project\n"],
    ["PROBE-READ /etc/motd", "read", { path: "/etc/motd" }, 'Welcome!\n  indented "quoted" line\n'],
  ] as const) {
    it(`runs the ${marker.split(" ")[0]} conversation: tool call, tool-result turn, then the output quoted verbatim`, async () => {
      const user = create(MessageSchema, { role: Role.USER, content: `Please run the probe: ${marker}` });
      const first = await s.port.generate(conversation([user]), { session: tool });
      expect(first.finishReason).toBe(FinishReason.TOOL_CALLS);
      const call = first.message!.toolCalls[0]!;
      expect([call.name, JSON.parse(call.arguments)]).toEqual([tool, args]);
      const second = await s.port.generate(
        conversation([user, first.message!, create(MessageSchema, { role: Role.TOOL, content: output, toolCallId: call.id })]),
        { session: tool },
      );
      expect(second.finishReason).toBe(FinishReason.STOP);
      expect(second.message?.content).toBe(output);
      expect(second.message?.toolCalls).toEqual([]);
    });
  }

  it("answers PROBE-ECHO with one reply and no tools", async () => {
    const res = await s.port.generate(userRequest("PROBE-ECHO are you there?"));
    expect(res.message?.content).toBe("PROBE-ECHO ok: PROBE-ECHO are you there?");
    expect(res.message?.toolCalls).toEqual([]);
  });

  it("claims completion on PROBE-NOCHANGE without calling any tool", async () => {
    const res = await s.port.generate(userRequest("PROBE-NOCHANGE src/app.ts"));
    expect(res.message?.content).toBe("Done. I have finished the task: src/app.ts is updated and everything is complete.");
    expect(res.message?.toolCalls).toEqual([]);
  });

  it("spreads PROBE-SLOW over several seconds of declared streaming latency", async () => {
    const v = await startStubServer(defaultScriptText, { clock: "virtual" });
    try {
      const { frames } = await collect(v.port.generateStream(userRequest("PROBE-SLOW"), { session: "slow" }));
      expect(frames.filter((f) => f.frame.case === "textDelta").length).toBeGreaterThan(20);
      const call = v.stub.episode("slow").calls[0]!;
      expect(Number(call.endMs - call.startMs)).toBeGreaterThan(5000);
    } finally {
      await v.close();
    }
  });

  it("lists the markers for anything else", async () => {
    const res = await s.port.generate(userRequest("hello"));
    for (const m of ["PROBE-ECHO", "PROBE-PWD", "PROBE-READ <path>", "PROBE-SLOW", "PROBE-NOCHANGE <path>"]) expect(res.message?.content).toContain(m);
  });
});
