import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ModelCallError, Role, startServer, type StubServer } from "../../src/index.js";

/*
 * Issue 31, item 9: a call cut off by its deadline failed with different details on the gRPC
 * port (grpc-js's "Deadline exceeded after 0.101s,LB pick: ...,remote_addr=...", or the
 * server's words) and the in-process port ("Deadline exceeded"). Now the same, whichever side
 * saw the deadline first.
 */

let server: StubServer;

beforeAll(async () => {
  server = await startServer({ script: { entries: [{ hang: true, repeat: true }] } });
});

afterAll(async () => {
  await server.close();
});

describe("a call past its deadline", () => {
  it("fails with DEADLINE_EXCEEDED and the same details over gRPC and in process, unary and streamed", async () => {
    const failures: { code: number; details: string }[] = [];
    for (const port of [server.client(), server.inProcess()]) {
      const request = { messages: [{ role: Role.USER, content: "wait" }] };
      const unary = await port.generate(request, { timeoutMs: 100 }).then(
        () => undefined,
        (err: unknown) => err as ModelCallError,
      );
      let streamed: ModelCallError | undefined;
      try {
        for await (const frame of port.generateStream(request, { timeoutMs: 100 })) void frame;
      } catch (err) {
        streamed = err as ModelCallError;
      }
      for (const err of [unary, streamed]) {
        expect(err).toBeInstanceOf(ModelCallError);
        failures.push({ code: err!.code, details: err!.details });
      }
    }
    expect(failures).toEqual(Array(4).fill({ code: Code.DEADLINE_EXCEEDED, details: "cut off by the caller's deadline" }));
  });
});
