import { Code } from "../../src/index.js";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { MessageSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { userRequest } from "../support/requests.js";
import { closeServerAfterEach, grpcPort, inProcess, text, toolTurn } from "./scripted-port-fixture.js";

closeServerAfterEach();

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
