import { create, toBinary } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FinishReason,
  GenerateResponseSchema,
  ListModelsRequestSchema,
  ModelService,
  Role,
  type GenerateResponse,
  type GenerateStreamResponse,
  type ListModelsResponse,
} from "../../gen/modelstub/v1/model_pb.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { Code, ModelCallError } from "../../src/index.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

// biome-ignore lint/suspicious/noExplicitAny: a generic grpc-js client, its methods made at run time from the service definition
const ModelClient = makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService") as any;

const threeEntries = `
entries:
  - reply: "Hello there."
  - reply:
      text: "Let me look."
      tool_calls:
        - name: bash
          arguments: { command: "ls -la /tmp" }
        - name: read
          arguments: '{"path":"/etc/hosts"}'
      usage: { input_tokens: 40, output_tokens: 9 }
  - reply: { text: "All done.", finish_reason: length }
`;

function joinStream(frames: GenerateStreamResponse[]) {
  let text = "";
  const calls: { id: string; name: string; arguments: string }[] = [];
  let final: Extract<GenerateStreamResponse["frame"], { case: "final" }>["value"] | undefined;
  for (const f of frames) {
    if (f.frame.case === "textDelta") text += f.frame.value;
    else if (f.frame.case === "toolCallDelta") {
      const d = f.frame.value;
      calls[d.index] ??= { id: d.id, name: d.name, arguments: "" };
      calls[d.index]!.arguments += d.arguments;
    } else if (f.frame.case === "final") final = f.frame.value;
  }
  return { text, calls, final };
}

/** The response a stream adds up to: its deltas joined, with the id, model and final frame. */
function responseOf(frames: GenerateStreamResponse[]): GenerateResponse {
  const { text, calls, final } = joinStream(frames);
  return create(GenerateResponseSchema, {
    id: frames[0]!.id,
    model: frames[0]!.model,
    message: { role: Role.ASSISTANT, content: text, toolCalls: calls },
    finishReason: final!.finishReason,
    usage: final!.usage,
  });
}

describe("ModelService over gRPC", () => {
  let s: StubServer;
  beforeAll(async () => {
    s = await startStubServer(threeEntries);
  });
  afterAll(() => s.close());

  it("answers three Generate calls in script order with the exact content, tool calls and usage, then FAILED_PRECONDITION", async () => {
    const session = { session: "three" };
    const first = await s.port.generate(userRequest("hi"), session);
    expect(first.message?.content).toBe("Hello there.");
    expect(first.message?.role).toBe(Role.ASSISTANT);
    expect(first.finishReason).toBe(FinishReason.STOP);
    expect(first.id).toBe("gen-three-1");
    expect(first.model).toBe("test-model");

    const second = await s.port.generate(userRequest("look"), session);
    expect(second.message?.content).toBe("Let me look.");
    expect(second.message?.toolCalls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["call-three-2-0", "bash", '{"command":"ls -la /tmp"}'],
      ["call-three-2-1", "read", '{"path":"/etc/hosts"}'],
    ]);
    expect(second.finishReason).toBe(FinishReason.TOOL_CALLS);
    expect([second.usage?.inputTokens, second.usage?.outputTokens, second.usage?.totalTokens]).toEqual([40, 9, 49]);

    const third = await s.port.generate(userRequest("finish"), session);
    expect(third.message?.content).toBe("All done.");
    expect(third.finishReason).toBe(FinishReason.LENGTH);

    const fourth = s.port.generate(userRequest("more?"), session);
    await expect(fourth).rejects.toBeInstanceOf(ModelCallError);
    await expect(fourth).rejects.toMatchObject({
      code: Code.FAILED_PRECONDITION,
      details: "entries ran out: it served its 3 entries (3 calls); add entries, or set on_exhausted: repeat-last or cycle on this list",
    });
  });

  it("streams deltas whose concatenation is the unary reply, byte for byte, then one final frame with usage", async () => {
    // Ids derive from the session and the call number: one session name on two fresh servers
    // gives both renderings the same ids, so nothing needs scrubbing before the comparison.
    const unaryServer = await startStubServer(threeEntries);
    const streamServer = await startStubServer(threeEntries);
    try {
      for (let i = 0; i < 3; i++) {
        const unary = await unaryServer.port.generate(userRequest("x"), { session: "same" });
        const { frames, error } = await collect(streamServer.port.generateStream(userRequest("x"), { session: "same" }));
        expect(error).toBeUndefined();
        expect(frames[frames.length - 1]!.frame.case).toBe("final");
        expect(frames.filter((f) => f.frame.case === "final")).toHaveLength(1);
        expect(frames.length).toBeGreaterThan(2);
        // Every frame carries the response id and model.
        expect(new Set(frames.map((f) => `${f.id} ${f.model}`)).size).toBe(1);
        expect(Buffer.from(toBinary(GenerateResponseSchema, responseOf(frames)))).toEqual(Buffer.from(toBinary(GenerateResponseSchema, unary)));
      }
    } finally {
      await unaryServer.close();
      await streamServer.close();
    }
  });

  it("sends a tool call's id and name on its first delta only, then argument fragments", async () => {
    await s.port.generate(userRequest("skip"), { session: "deltas" });
    const { frames } = await collect(s.port.generateStream(userRequest("look"), { session: "deltas" }));
    const deltas = frames.flatMap((f) => (f.frame.case === "toolCallDelta" ? [f.frame.value] : []));
    const firstOfBash = deltas.find((d) => d.index === 0)!;
    expect([firstOfBash.id, firstOfBash.name, firstOfBash.arguments]).toEqual(["call-deltas-2-0", "bash", ""]);
    const later = deltas.filter((d) => d.index === 0).slice(1);
    expect(later.length).toBeGreaterThan(0);
    for (const d of later) expect([d.id, d.name]).toEqual(["", ""]);
  });

  it("lists the default model when the script declares none", async () => {
    const client = new ModelClient(s.address, credentials.createInsecure());
    try {
      const res = await new Promise<ListModelsResponse>((resolve, reject) =>
        client.ListModels(create(ListModelsRequestSchema), (err: Error | null, r: ListModelsResponse) => (err ? reject(err) : resolve(r))),
      );
      expect(res.models.map((m) => [m.id, m.ownedBy])).toEqual([["modelstub", "modelstub"]]);
    } finally {
      client.close();
    }
  });
});

describe("the model port", () => {
  it("returns byte-identical responses in process and over gRPC for the same script", async () => {
    const s = await startStubServer(threeEntries);
    try {
      const inProcess = createInProcessPort(createStub({ script: loadScriptText(threeEntries, "test.yaml") }));
      for (const text of ["one", "two", "three"]) {
        const a = await inProcess.generate(userRequest(text), { session: "same" });
        const b = await s.port.generate(userRequest(text), { session: "same" });
        expect(Buffer.from(toBinary(GenerateResponseSchema, b))).toEqual(Buffer.from(toBinary(GenerateResponseSchema, a)));
      }
      await expect(inProcess.generate(userRequest("four"), { session: "same" })).rejects.toMatchObject({ code: Code.FAILED_PRECONDITION });
    } finally {
      await s.close();
    }
  });
});
