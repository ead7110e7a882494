import { describe, expect, expectTypeOf, it } from "vitest";
import type { GetEpisodeResponse, VerifySessionResponse } from "../../gen/modelstub/v1/control_pb.js";
import { startServer } from "../../src/index.js";
import { createControlClient, type ControlClient, type ControlResponse } from "../../src/port/control-client.js";

/*
 * ControlClient.call takes its request and result types from the service's descriptor: a
 * misspelt method or field, or a wrong result type, fails `tsc` (CI's type check), not a run.
 * The `@ts-expect-error` lines are the test: each fails the type check if its line compiles.
 */
describe("the control client's call, typed from the service descriptor", () => {
  it("answers each method with that method's response message", () => {
    expectTypeOf<ControlResponse<"GetEpisode">>().toEqualTypeOf<GetEpisodeResponse>();
    expectTypeOf<ReturnType<typeof callVerify>>().resolves.toEqualTypeOf<VerifySessionResponse>();
  });

  it("refuses, at compile time, a method it does not have, a field its request does not have, and a streaming method", () => {
    const typeOnly = (client: ControlClient) => {
      // @ts-expect-error -- "GetEpisodes" is not a method of ControlService
      void client.call("GetEpisodes", { session: "s" });
      // @ts-expect-error -- GetEpisode's request has no `sesion`
      void client.call("GetEpisode", { sesion: "s" });
      // @ts-expect-error -- ExportEpisode streams: exportEpisode() reads it
      void client.call("ExportEpisode", { session: "s" });
    };
    expect(typeof typeOnly).toBe("function");
  });

  it("still sends plain objects as the method's request message", async () => {
    const server = await startServer({ script: "entries:\n  - reply: hi\n" });
    const client = createControlClient(server.grpcAddress);
    try {
      const verified = await client.call("VerifySession", { session: "nobody", allowMissing: true });
      expect(verified.satisfied).toBe(false);
      expect(verified.unused.map((u) => u.entry)).toEqual(["entries[0]"]);
    } finally {
      client.close();
      await server.close();
    }
  });
});

const callVerify = (client: ControlClient) => client.call("VerifySession", { session: "s" });
