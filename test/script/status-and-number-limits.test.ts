import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ListModelsRequestSchema, ModelService, type ListModelsResponse } from "../../gen/modelstub/v1/model_pb.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { Code, ScriptError, type ModelCallError } from "../../src/index.js";
import { fitStatusDetails } from "../../src/grpc/fit-status-details.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

describe("numbers and statuses at their limits", () => {
  let s: StubServer;
  beforeAll(async () => {
    s = await startStubServer(
      [
        "models:",
        "  - { id: huge-context, context_length: 4294967295 }",
        "entries:",
        "  - times: 4294967295",
        "    match: { contains: usage }",
        "    reply: { text: counted, usage: { input_tokens: 2147483647, output_tokens: 2147483647 } }",
        "  - match: { contains: status }",
        "    repeat: true",
        `    error: { code: UNAVAILABLE, message: "${"m".repeat(1024)}", trailers: { retry-after-ms: "250", x-trace: "AAEC/w==", x-big: "${"v".repeat(4096 - 3 * 32 - "retry-after-ms250x-traceAAEC/w==x-big".length)}" } }`,
      ].join("\n"),
    );
  });
  afterAll(() => s.close());

  it("sends the largest token counts, with their sum, as uint32", async () => {
    const r = await s.port.generate(userRequest("usage"), { session: "n" });
    expect(r.usage).toMatchObject({ inputTokens: 2147483647, outputTokens: 2147483647, totalTokens: 4294967294 });
  });

  it("lists the largest context length, and verifies the largest times", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: a generic grpc-js client, its methods made at run time from the service definition
    const client = new (makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService") as any)(s.address, credentials.createInsecure());
    try {
      const res = await new Promise<ListModelsResponse>((resolve, reject) =>
        client.ListModels(create(ListModelsRequestSchema), new Metadata(), (err: Error | null, r: ListModelsResponse) => (err ? reject(err) : resolve(r))),
      );
      expect(res.models[0]!.contextLength).toBe(4294967295);
    } finally {
      client.close();
    }
    const v = await s.control.call("VerifySession", { session: "n" });
    expect(v.unused.find((u) => u.entry === "entries[0]")?.remaining).toBeGreaterThanOrEqual(4294967294);
  });

  it("delivers a status with the longest message and the heaviest trailers as scripted", async () => {
    const err = (await s.port.generate(userRequest("status"), { session: "n" }).catch((e: unknown) => e)) as ModelCallError | ServiceError;
    expect(err).toMatchObject({ code: Code.UNAVAILABLE, details: "m".repeat(1024) });
    expect((err as ModelCallError).trailers.filter(([k]) => k.startsWith("retry") || k.startsWith("x-")).map(([k, v]) => [k, v.length])).toEqual([
      ["retry-after-ms", 3],
      ["x-trace", 8],
      ["x-big", 3963],
    ]);
  });

  const statusScript = (error: string) => `entries:\n  - error: ${error}\n`;
  const loadError = (text: string) => {
    try {
      loadScriptText(text, "s.yaml");
    } catch (err) {
      if (err instanceof ScriptError) return err.message;
    }
    throw new Error("loaded");
  };

  it("refuses one byte more of message, or of trailers", () => {
    expect(loadError(statusScript(`{ code: UNAVAILABLE, message: "${"m".repeat(1023)}é" }`))).toBe(
      "cannot load script s.yaml:2:42: entries[0].error.message: the message is 1025 bytes long (UTF-8); the most is 1024 (hint: gRPC sends it percent-encoded in a trailer, and C core clients (grpcio, grpc++) refuse trailers past 8 KiB: shorten it)",
    );
    expect(loadError(statusScript(`{ code: UNAVAILABLE, trailers: { x-big: "${"v".repeat(4096 - 32 - 5 + 1)}" } }`))).toBe(
      "cannot load script s.yaml:2:43: entries[0].error.trailers: the trailers weigh 4097 bytes (each its name, its value and 32, as HTTP/2 counts them); the most is 4096 (hint: gRPC C core clients (grpcio, grpc++) refuse trailers past 8 KiB, the message included: send fewer or shorter trailers)",
    );
  });
});

describe("fitStatusDetails()", () => {
  it("cuts a 400 KB message to 7 KiB on the wire at a line end, saying how much went", () => {
    const long = Array.from({ length: 4000 }, (_, i) => `bad.yaml:${i + 1}:1: entries[${i}]: unknown key \`\u00e9t\u00e9\` (hint: see the docs)`).join("\n");
    const fitted = fitStatusDetails(long);
    expect(encodeURI(fitted).length).toBeLessThanOrEqual(7 * 1024);
    expect(fitted).toMatch(/\(hint: see the docs\)\n\.\.\. \(\d+ more characters cut: the status message is kept under 7 KiB\)$/);
    expect(fitStatusDetails("short")).toBe("short");
  });

  it("makes a lone surrogate safe for grpc-js, which percent-encodes with encodeURI", () => {
    expect(() => encodeURI(fitStatusDetails("key \uD800 here"))).not.toThrow();
  });
});
