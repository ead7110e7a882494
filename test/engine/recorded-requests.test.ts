import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ToolSchema } from "../../gen/modelstub/v1/model_pb.js";
import { createStub } from "../../src/engine/create-stub.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { Code, ModelCallError } from "../../src/index.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { sha256Hex } from "../../src/shared/request-fingerprint.js";
import { userRequest } from "../support/requests.js";
import { toolTurn } from "./scripted-port-fixture.js";

/** A port over `script`, in process; `mode` as serve --replay-mode. */
function port(script: string, mode?: "strict" | "unordered" | "order-only") {
  return createInProcessPort(createStub({ script: loadScriptText(script, "test.yaml"), ...(mode ? { replayMode: mode } : {}) }));
}

/** The status a call ends with: its code and message, or "ok" and the reply's text. */
async function outcome(p: Promise<{ message?: { content: string } | undefined }>): Promise<string> {
  try {
    return `ok ${(await p).message?.content ?? ""}`;
  } catch (err) {
    if (err instanceof ModelCallError) return `${err.code === Code.FAILED_PRECONDITION ? "FAILED_PRECONDITION" : err.code}: ${err.details}`;
    throw err;
  }
}

const long = "x".repeat(2000);

describe("entries that keep the request they were recorded for", () => {
  it("compare the tool results since the last assistant turn and the tools offered, and say how they differ", async () => {
    const script = `entries:
  - reply: "read it"
    request:
      last_user: go
      tool_results: [{ tool: read, content: "a.md" }]
      tools: [read, bash]
`;
    const tools = [create(ToolSchema, { name: "read" }), create(ToolSchema, { name: "bash" })];
    expect(await outcome(port(script).generate({ ...toolTurn("go", "read", "a.md"), tools }))).toBe("ok read it");
    expect(await outcome(port(script).generate({ ...toolTurn("go", "read", "b.md"), tools }))).toBe(
      'FAILED_PRECONDITION: the request does not match entries[0], the next recorded entry of entries (replay mode strict): tool result 1 ("read"): expected "a.md", got "b.md"; no other recorded entry is nearer; replay the recorded conversation, record it again, or serve with --replay-mode order-only',
    );
    expect(await outcome(port(script).generate({ ...toolTurn("go", "bash", "a.md"), tools: tools.slice(0, 1) }))).toBe(
      'FAILED_PRECONDITION: the request does not match entries[0], the next recorded entry of entries (replay mode strict): tool result 1: expected tool "read", got "bash"; expected tools offered ["read", "bash"], got ["read"]; no other recorded entry is nearer; replay the recorded conversation, record it again, or serve with --replay-mode order-only',
    );
    expect(await outcome(port(script).generate(userRequest("go", { tools })))).toContain(
      'expected 1 tool result(s) since the last assistant turn ["read"], got 0 []',
    );
  });

  it("compare a long text by its SHA-256, and quote how it begins", async () => {
    const script = `entries:\n  - reply: ok\n    request:\n      last_user: { sha256: "${sha256Hex(long)}", begins: "xxxx" }\n`;
    expect(await outcome(port(script).generate(userRequest(long)))).toBe("ok ok");
    expect(await outcome(port(script).generate(userRequest("short")))).toContain(
      `expected last user the text beginning "xxxx" (sha256 ${sha256Hex(long).slice(0, 12)}...), got "short"`,
    );
  });

  it("answer in recorded order among equal requests when unordered, and say when a request was made more often than recorded", async () => {
    const script = `replay: { mode: unordered }
entries:
  - { reply: first, request: { last_user: a } }
  - { reply: other, request: { last_user: b } }
  - { reply: second, request: { last_user: a } }
`;
    const p = port(script);
    expect(await outcome(p.generate(userRequest("a")))).toBe("ok first");
    expect(await outcome(p.generate(userRequest("a")))).toBe("ok second");
    expect(await outcome(p.generate(userRequest("a")))).toBe(
      "FAILED_PRECONDITION: the request matches only entries[0] of entries, which is already used (replay mode unordered): the recording made this request fewer times",
    );
    expect(await outcome(p.generate(userRequest("c")))).toBe(
      'FAILED_PRECONDITION: the request matches no unused recorded entry of entries (replay mode unordered); against entries[1]: expected last user "b", got "c"; replay the recorded conversation, record it again, or serve with --replay-mode order-only',
    );
    expect(await outcome(p.generate(userRequest("b")))).toBe("ok other");
  });

  it("are not compared with order-only, nor when the script has none: hand-written scripts answer as before", async () => {
    expect(await outcome(port("entries:\n  - { reply: yes, request: { last_user: a } }\n", "order-only").generate(userRequest("b")))).toBe("ok yes");
    expect(await outcome(port("replay: { mode: strict }\nentries:\n  - reply: yes\n").generate(userRequest("b")))).toBe("ok yes");
  });

  it("leave a refused request's entry for the next request, and name an entry the request matches further on", async () => {
    const p = port("entries:\n  - { reply: one, request: { last_user: a } }\n  - { reply: two, request: { last_user: b } }\n");
    expect(await outcome(p.generate(userRequest("b")))).toContain(
      "nearest recorded entry: entries[1] (matches exactly: the requests came in another order than recorded)",
    );
    expect(await outcome(p.generate(userRequest("a")))).toBe("ok one");
    expect(await outcome(p.generate(userRequest("b")))).toBe("ok two");
  });
});
