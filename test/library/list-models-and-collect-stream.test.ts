import { toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectStream, GenerateResponseSchema, ModelSchema, Role, startServer, type StubServer } from "../../src/index.js";

/*
 * Issue 31, item 9: ModelPort had no listModels, and no helper collected a stream into the
 * GenerateResponse Generate answers. Both, over gRPC and in process, compared by bytes.
 */

let server: StubServer;

beforeAll(async () => {
  server = await startServer({
    clock: "virtual",
    script: {
      models: [{ id: "agent-stub", owned_by: "tests", context_length: 8192 }],
      entries: [
        {
          reply: {
            text: "Reading the file.",
            tool_calls: [
              { name: "read_file", arguments: { path: "a.ts" } },
              { name: "grep", arguments: { pattern: "x" } },
            ],
          },
          repeat: true,
        },
      ],
    },
  });
});

afterAll(async () => {
  await server.close();
});

describe("ModelPort.listModels", () => {
  it("lists the script's models, the same over gRPC and in process", async () => {
    const grpc = server.client();
    const overGrpc = await grpc.listModels({ session: "m" });
    const inProcess = await server.inProcess().listModels({ session: "m" });
    expect(overGrpc.map((m) => m.id)).toEqual(["agent-stub"]);
    expect(overGrpc[0]).toMatchObject({ ownedBy: "tests", contextLength: 8192 });
    expect(inProcess.map((m) => Buffer.from(toBinary(ModelSchema, m)))).toEqual(overGrpc.map((m) => Buffer.from(toBinary(ModelSchema, m))));
  });
});

describe("collectStream", () => {
  it("collects a stream into the GenerateResponse Generate answers, byte for byte, on both ports", async () => {
    for (const port of [server.client(), server.inProcess()]) {
      const request = { model: "agent-stub", messages: [{ role: Role.USER, content: "go" }] };
      const unary = await port.generate(request, { session: "u" });
      const collected = await collectStream(port.generateStream(request, { session: "s" }));
      expect(collected.message?.toolCalls.map((t) => t.name)).toEqual(["read_file", "grep"]);
      // Ids name the session (call-<session>-...): the same session letter, so the same bytes.
      const same = (r: typeof unary) => Buffer.from(toBinary(GenerateResponseSchema, r)).toString("latin1").replaceAll("-u-", "-s-");
      expect(Buffer.from(toBinary(GenerateResponseSchema, collected)).toString("latin1")).toBe(same(unary));
    }
  });
});
