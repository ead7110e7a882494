import { Code } from "../../src/index.js";
import { describe, expect, it } from "vitest";
import { userRequest } from "../support/requests.js";
import { closeServerAfterEach, grpcPort, inProcess, toolTurn } from "./scripted-port-fixture.js";

closeServerAfterEach();

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
    const output = 'line 1\n  {{not a template}}\t"tabs"\n';
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
