import { Code, ModelCallError } from "../../src/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { ms, script } from "./failure-fixture.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Trailers as the script gave them: without the ones HTTP/2 and grpc-js add on their own. */
const scripted = (trailers: readonly (readonly [string, string])[]) => trailers.filter(([k]) => k !== "content-type" && k !== "date");

describe("failures on the real clock", () => {
  it("an error entry gives exactly the scripted status, message and trailers", async () => {
    server = await startStubServer(script);
    const err = await server.port.generate(userRequest("x"), { step: "error" }).catch((e: ModelCallError) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    const e = err as ModelCallError;
    expect([e.code, e.details]).toEqual([Code.RESOURCE_EXHAUSTED, "quota exceeded, slow down"]);
    expect(scripted(e.trailers)).toEqual([
      ["retry-after-ms", "1500"],
      ["x-quota", "tokens"],
    ]);
  });

  it("the same error entry ends a stream with the same status", async () => {
    server = await startStubServer(script);
    const { frames, error } = await collect(server.port.generateStream(userRequest("x"), { step: "error" }));
    expect(frames).toHaveLength(0);
    expect(error).toMatchObject({ code: Code.RESOURCE_EXHAUSTED, details: "quota exceeded, slow down" });
  });

  it("a timeout entry answers DEADLINE_EXCEEDED itself, after its latency", async () => {
    server = await startStubServer(script);
    const t = performance.now();
    await expect(server.port.generate(userRequest("x"), { step: "timeout" })).rejects.toMatchObject({
      code: Code.DEADLINE_EXCEEDED,
      details: "scripted timeout at steps.timeout[0]",
    });
    expect(ms(t)).toBeGreaterThanOrEqual(190);
  });

  it("a hang entry is cut off by a ~100 ms client deadline", async () => {
    server = await startStubServer(script);
    const t = performance.now();
    await expect(server.port.generate(userRequest("x"), { step: "hang", timeoutMs: 100 })).rejects.toMatchObject({ code: Code.DEADLINE_EXCEEDED });
    expect(ms(t)).toBeGreaterThanOrEqual(90);
  });

  it("a call without x-modelstub-session lands in session default", async () => {
    server = await startStubServer(script);
    await server.port.generate(userRequest("x"), { step: "error" }).catch(() => undefined);
    expect(server.stub.sessions().map((s) => [s.name, s.calls])).toEqual([["default", 1]]);
    expect(server.stub.episode("default").calls[0]!.session).toBe("default");
  });

  it("a client cancel ends a hang, and the episode records it as cancelled", async () => {
    server = await startStubServer(script);
    const ac = new AbortController();
    const p = server.port.generate(userRequest("x"), { step: "hang", session: "cancel", signal: ac.signal });
    // Cancel once the server is running the call, not while the channel is still connecting.
    await expect.poll(() => server!.stub.inFlight()).toBe(1);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: Code.CANCELLED });
    await expect.poll(() => server!.stub.episode("cancel").calls.length).toBe(1);
    expect(server.stub.episode("cancel").calls[0]!.status?.message).toBe("cancelled by the client");
  });

  it("waits the declared latency before the first byte and between chunks", async () => {
    server = await startStubServer(script);
    const t = performance.now();
    const { frames } = await collect(server.port.generateStream(userRequest("x"), { step: "real-latency" }));
    expect(frames.filter((f) => f.frame.case === "textDelta")).toHaveLength(3);
    expect(ms(t)).toBeGreaterThanOrEqual(95);
  });

  describe("a stream that breaks after 2 chunks", () => {
    it("delivers exactly 2 chunks, then the scripted error with its trailers", async () => {
      server = await startStubServer(script);
      const { frames, error } = await collect(server.port.generateStream(userRequest("x"), { step: "break-error" }));
      expect(frames.map((f) => f.frame.value)).toEqual(["alpha ", "beta "]);
      expect(error).toMatchObject({ code: Code.UNAVAILABLE, details: "link lost" });
      expect(scripted((error as ModelCallError).trailers)).toEqual([["retry-after-ms", "30"]]);
    });

    it("records each break as a broken stream: 2 chunks sent, how it broke, and the status", async () => {
      server = await startStubServer(script);
      for (const step of ["break-error", "break-hang", "break-drop"]) {
        await collect(server.port.generateStream(userRequest("x"), { step, session: "breaks", timeoutMs: 150 }));
      }
      await expect.poll(() => server!.stub.inFlight()).toBe(0);
      const calls = server.stub.episode("breaks").calls.map((c) => ({
        outcome: c.outcome,
        chunksSent: c.chunksSent,
        streamBreak: c.streamBreak,
        status: c.status ? [c.status.code, c.status.message, c.status.trailers.map((t) => [t.key, t.value])] : undefined,
      }));
      expect(calls).toEqual([
        { outcome: Outcome.STREAM_BROKEN, chunksSent: 2, streamBreak: StreamBreak.ERROR, status: [Code.UNAVAILABLE, "link lost", [["retry-after-ms", "30"]]] },
        {
          outcome: Outcome.STREAM_BROKEN,
          chunksSent: 2,
          streamBreak: StreamBreak.HANG,
          status: [Code.DEADLINE_EXCEEDED, "cut off by the caller's deadline", []],
        },
        { outcome: Outcome.STREAM_BROKEN, chunksSent: 2, streamBreak: StreamBreak.DROP, status: undefined },
      ]);
    });

    it("delivers exactly 2 chunks, then hangs until the caller's deadline", async () => {
      server = await startStubServer(script);
      const { frames, error } = await collect(server.port.generateStream(userRequest("x"), { step: "break-hang", timeoutMs: 150 }));
      expect(frames.map((f) => f.frame.value)).toEqual(["alpha ", "beta "]);
      expect(error).toMatchObject({ code: Code.DEADLINE_EXCEEDED });
    });

    it("delivers exactly 2 chunks, then drops the transport stream abruptly", async () => {
      server = await startStubServer(script);
      const { frames, error } = await collect(server.port.generateStream(userRequest("x"), { step: "break-drop" }));
      expect(frames.map((f) => f.frame.value)).toEqual(["alpha ", "beta "]);
      // A reset stream reaches a grpc-js client as INTERNAL "Received RST_STREAM with code 2".
      expect(error).toMatchObject({ code: Code.INTERNAL });
      expect((error as ModelCallError).details).toContain("RST_STREAM");
    });

    it("behaves the same in a unary call: the break's ending instead of the reply", async () => {
      server = await startStubServer(script);
      await expect(server.port.generate(userRequest("x"), { step: "break-error" })).rejects.toMatchObject({ code: Code.UNAVAILABLE, details: "link lost" });
    });
  });
});
