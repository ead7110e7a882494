import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelService } from "../../gen/modelstub/v1/model_pb.js";
import { Code } from "../../src/index.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

// A trailer whose name ends in -bin is binary in gRPC: the script gives its bytes as base64.
const script = `
entries:
  - error:
      code: UNAVAILABLE
      message: "overloaded"
      trailers: { retry-after-ms: "250", x-detail-bin: "AAEC/w==" }
  - error:
      code: UNAVAILABLE
      message: "short"
      trailers: { x-short-bin: "AAE" }
`;

let server: StubServer;
beforeAll(async () => {
  server = await startStubServer(script);
});
afterAll(() => server.close());

describe("a scripted -bin trailer", () => {
  it("reaches a plain grpc-js client as the bytes its base64 names, beside the text trailers", async () => {
    const Client = makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService");
    const client = new Client(server.address, credentials.createInsecure()) as unknown as {
      Generate(req: unknown, md: Metadata, cb: (err: ServiceError | null) => void): void;
      close(): void;
    };
    try {
      const err = await new Promise<ServiceError>((resolve) => client.Generate(userRequest("x"), new Metadata(), (e) => resolve(e!)));
      expect(err.code).toBe(Code.UNAVAILABLE);
      expect(err.details).toBe("overloaded");
      expect(err.metadata.get("retry-after-ms")).toEqual(["250"]);
      expect(err.metadata.get("x-detail-bin")).toEqual([Buffer.from([0, 1, 2, 255])]);
    } finally {
      client.close();
    }
  });

  it("comes back through the model port as the script's base64, and is recorded so", async () => {
    await expect(server.port.generate(userRequest("x"), { session: "bin" })).rejects.toMatchObject({
      code: Code.UNAVAILABLE,
      trailers: expect.arrayContaining([["x-detail-bin", "AAEC/w=="]]),
    });
    const recorded = server.stub.episode("bin").calls[0]!.status!.trailers.map((t) => [t.key, t.value]);
    expect(recorded).toEqual([
      ["retry-after-ms", "250"],
      ["x-detail-bin", "AAEC/w=="],
    ]);
  });

  it("given without padding, is recorded and returned padded, the same through every port", async () => {
    await server.port.generate(userRequest("x"), { session: "pad" }).catch(() => undefined);
    await expect(server.port.generate(userRequest("x"), { session: "pad" })).rejects.toMatchObject({
      trailers: expect.arrayContaining([["x-short-bin", "AAE="]]),
    });
    expect(server.stub.episode("pad").calls[1]!.status!.trailers.map((t) => [t.key, t.value])).toEqual([["x-short-bin", "AAE="]]);
  });
});
