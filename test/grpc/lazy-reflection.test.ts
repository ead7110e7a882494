import { Client, credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultScriptText } from "../../src/script/default-script.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

// @grpc/reflection loads on the first reflection call (reflection-service.ts): messages that
// arrive meanwhile are kept, and a request it cannot decode ends the call as grpc-js would.
const pass = (b: Buffer) => b;
const path = (version: string) => `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`;

/** Sends raw request messages on one reflection stream; resolves with the raw replies, or the error. */
function reflect(address: string, version: string, requests: Buffer[]): Promise<{ replies: Buffer[]; error?: ServiceError }> {
  const client = new Client(address, credentials.createInsecure());
  const call = client.makeBidiStreamRequest(path(version), pass, pass, new Metadata());
  const replies: Buffer[] = [];
  return new Promise((resolve) => {
    call.on("data", (b: Buffer) => replies.push(b));
    call.on("error", (error: ServiceError) => (client.close(), resolve({ replies, error })));
    call.on("end", () => (client.close(), resolve({ replies })));
    for (const r of requests) call.write(r);
    call.end();
  });
}

/** ServerReflectionRequest{list_services: "*"} (field 7). */
const listServices = Buffer.from([0x3a, 0x01, 0x2a]);

describe("server reflection, loaded on first use", () => {
  let s: StubServer;
  beforeAll(async () => {
    s = await startStubServer(defaultScriptText);
  });
  afterAll(() => s.close());

  for (const version of ["v1", "v1alpha"]) {
    it(`answers every request sent before it loaded, in order (${version})`, async () => {
      const { replies, error } = await reflect(s.address, version, [listServices, listServices, listServices]);
      expect(error).toBeUndefined();
      expect(replies).toHaveLength(3);
      for (const r of replies) {
        const text = r.toString("latin1");
        for (const name of ["grpc.health.v1.Health", "modelstub.v1.ControlService", "modelstub.v1.ModelService"]) expect(text).toContain(name);
      }
    });
  }

  it("ends a call whose request it cannot decode with INTERNAL, as grpc-js does", async () => {
    // Field 1's tag and no length: protobufjs throws on it (as @grpc/reflection loaded eagerly did).
    const { error } = await reflect(s.address, "v1", [Buffer.from([0x0a])]);
    expect(error?.code).toBe(status.INTERNAL);
    expect(error?.details).toMatch(/^Error deserializing request/);
  });
});
