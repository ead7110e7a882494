import { readFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { GenerateRequestSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the token rule", () => {
  it("is written out in docs/script.md with the numbers checked below", () => {
    const page = readFileSync(new URL("../../docs/script.md", import.meta.url), "utf8").replace(/\s+/g, " ");
    expect(page).toContain("**The token rule**");
    expect(page).toContain("make 3 + 3 + 1 + 4 = **11** input tokens, where their 37 bytes rounded once would make 10");
    expect(page).toContain("the reply `Done.` (5 bytes) is 2 output tokens; total 13");
  });

  it("rounds each text up on its own and sums them: the worked example of docs/script.md", async () => {
    server = await startStubServer('entries: [{ reply: "Done." }]', { clock: "virtual" });
    const request = create(GenerateRequestSchema, {
      model: "m",
      messages: [
        { role: Role.SYSTEM, content: "Be brief." }, // 9 bytes: 3
        { role: Role.USER, content: "Résumé?" }, // 9 bytes (é is 2): 3
        { role: Role.ASSISTANT, toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a.md"}' }] }, // 4 bytes: 1, 15 bytes: 4
      ],
      // Not counted: the tools offered.
      tools: [{ name: "read", description: "Reads a file.", parametersJson: "{}" }],
    });
    const res = await server.port.generate(request);
    // 3 + 3 + 1 + 4 = 11, where the 37 bytes rounded up once would be 10; "Done." is 5 bytes: 2.
    expect([res.usage?.inputTokens, res.usage?.outputTokens, res.usage?.totalTokens]).toEqual([11, 2, 13]);
  });
});
