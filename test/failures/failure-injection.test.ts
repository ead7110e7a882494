import { credentials, makeGenericClientConstructor, Metadata, status as grpcStatus, type ServiceError } from "@grpc/grpc-js";
import { getEventListeners } from "node:events";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GetEpisodeResponse } from "../../gen/modelstub/v1/control_pb.js";
import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import { ModelService, type GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import { createVirtualClock, type Clock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/engine/load-script.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { Code } from "../../src/engine/status-code.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { createControlClient } from "../../src/port/control-client.js";
import { createGrpcPort } from "../../src/port/grpc-port.js";
import { ModelCallError } from "../../src/port/model-port.js";
import { collect, userRequest } from "../support/requests.js";
import { startServeProcess } from "../support/run-cli.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const script = `
steps:
  slow:
    - latency: 30s
      reply: "worth the wait"
  slow-stream:
    - latency: { first_byte: 10s, per_chunk: 5s }
      reply: "one two three four"
  error:
    - error:
        code: RESOURCE_EXHAUSTED
        message: "quota exceeded, slow down"
        trailers: { retry-after-ms: "1500", x-quota: "tokens" }
  timeout:
    - latency: 200ms
      timeout: true
  hang:
    - hang: true
  long:
    - latency: 60m
      reply: never
  break-error:
    - reply: "alpha beta gamma delta"
      break: { after_chunks: 2, then: error, error: { code: UNAVAILABLE, message: "link lost", trailers: { retry-after-ms: "30" } } }
  break-hang:
    - reply: "alpha beta gamma delta"
      break: { after_chunks: 2, then: hang }
  break-drop:
    - reply: "alpha beta gamma delta"
      break: { after_chunks: 2, then: drop }
  real-latency:
    - latency: { first_byte: 60ms, per_chunk: 20ms }
      reply: "a b c"
  well-inside:
    - latency: 4500ms
      repeat: true
      reply: "in time"
  inside-deadline:
    - latency: 4990ms
      repeat: true
      reply: "just in time"
  at-deadline:
    - latency: 5s
      repeat: true
      reply: "too late"
`;

/** Trailers as the script gave them: without the ones HTTP/2 and grpc-js add on their own. */
const scripted = (trailers: readonly (readonly [string, string])[]) => trailers.filter(([k]) => k !== "content-type" && k !== "date");

const ms = (since: number) => performance.now() - since;
const code = (p: Promise<unknown>) => p.then(() => Code.OK, (e: ModelCallError) => e.code);

describe("the virtual clock", () => {
  it("completes 30 s of declared latency in well under 1 s of wall time, and records 30 s", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const t = performance.now();
    const res = await server.port.generate(userRequest("x"), { step: "slow", session: "v" });
    expect(ms(t)).toBeLessThan(1000);
    expect(res.message?.content).toBe("worth the wait");
    const call = server.stub.episode("v").calls[0]!;
    expect([call.startMs, call.endMs]).toEqual([0n, 30_000n]);
  });

  it("waits per chunk in virtual time too: 10 s + 3 x 5 s for a four-word stream", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const t = performance.now();
    const { frames } = await collect(server.port.generateStream(userRequest("x"), { step: "slow-stream", session: "v" }));
    expect(ms(t)).toBeLessThan(1000);
    expect(frames.filter((f) => f.frame.case === "textDelta")).toHaveLength(4);
    expect(server.stub.episode("v").calls[0]!.endMs).toBe(25_000n);
  });

  it("honours the caller's deadline in virtual time: a declared hour against a 5 s deadline ends at once as DEADLINE_EXCEEDED", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const t = performance.now();
    await expect(server.port.generate(userRequest("x"), { step: "long", timeoutMs: 5000 })).rejects.toMatchObject({ code: Code.DEADLINE_EXCEEDED });
    expect(ms(t)).toBeLessThan(1000);
  });

  it("decides a declared wait against the deadline the same way every run: well inside it completes, reaching it does not", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    // A connected channel: time spent connecting counts against the first call's deadline.
    await server.port.generate(userRequest("x"), { step: "well-inside", session: "warm" });
    // The budget arrives measured, short of 5000 ms by however long the client and the server
    // took to send and read the call (tens of ms on a loaded machine): a declared wait that
    // reaches 5000 ms reaches it in every run; one 500 ms inside stays inside.
    for (let i = 0; i < 10; i++) {
      expect(await code(server.port.generate(userRequest("x"), { step: "well-inside", timeoutMs: 5000 }))).toBe(Code.OK);
      expect(await code(server.port.generate(userRequest("x"), { step: "at-deadline", timeoutMs: 5000 }))).toBe(Code.DEADLINE_EXCEEDED);
    }
    // A cut call ends where its completed waits got to: the 5 s wait never completed.
    const calls = server.stub.episode("default").calls;
    expect(calls.map((c) => c.endMs - c.startMs)).toEqual(Array.from({ length: 10 }, () => [4500n, 0n]).flat());
  });

  it("rounds the budget up to whole 10 ms, so a deadline in whole 10 ms holds to the millisecond (in process, where nothing is lost on the way)", async () => {
    const stub = createStub({ script: loadScriptText(script, "deadlines.yaml"), clock: createVirtualClock() });
    const port = createInProcessPort(stub);
    for (const timeoutMs of [5000, 4991]) {
      expect(await code(port.generate(userRequest("x"), { step: "inside-deadline", timeoutMs }))).toBe(Code.OK);
      expect(await code(port.generate(userRequest("x"), { step: "at-deadline", timeoutMs }))).toBe(Code.DEADLINE_EXCEEDED);
    }
    // 4990 ms of declared latency in a 4990 ms budget reaches it.
    expect(await code(port.generate(userRequest("x"), { step: "inside-deadline", timeoutMs: 4990 }))).toBe(Code.DEADLINE_EXCEEDED);
  });

  it("inherits defaults.latency: an entry's own keys win, the keys it leaves out come from the defaults", async () => {
    server = await startStubServer(`
defaults:
  latency: { first_byte: 1s, per_chunk: 200ms }
entries:
  - reply: "a b c"
  - latency: 50ms
    reply: "a b c"
  - latency: { per_chunk: 10ms }
    reply: "a b c"
`, { clock: "virtual" });
    for (let i = 0; i < 3; i++) await collect(server.port.generateStream(userRequest("x"), { session: "d" }));
    // Three chunks: the first-byte wait, then a per-chunk wait before each of the other two.
    expect(server.stub.episode("d").calls.map((c) => Number(c.endMs - c.startMs))).toEqual([1000 + 2 * 200, 50 + 2 * 200, 1000 + 2 * 10]);
  });

  it("under `modelstub serve --clock virtual`, answers a call with 30 s of latency in under 1 s of wall time", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-virtual-"));
    const scriptPath = join(dir, "slow.yaml");
    await writeFile(scriptPath, "entries:\n  - latency: 30s\n    reply: worth the wait\n");
    const { child, address, exit } = await startServeProcess(["--script", scriptPath, "--grpc", "127.0.0.1:0", "--clock", "virtual"]);
    const port = createGrpcPort(address);
    const control = createControlClient(address);
    try {
      const t = performance.now();
      const res = await port.generate(userRequest("x"), { session: "cli" });
      expect(ms(t)).toBeLessThan(1000);
      expect(res.message?.content).toBe("worth the wait");
      const call = (await control.call<GetEpisodeResponse>("GetEpisode", { session: "cli" })).episode!.calls[0]!;
      expect([call.startMs, call.endMs]).toEqual([0n, 30_000n]);
    } finally {
      port.close();
      control.close();
      child.kill("SIGTERM");
    }
    expect(await exit).toBe(0);
  });

  it("cuts a hang off at the caller's deadline without real waiting", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const t = performance.now();
    await expect(server.port.generate(userRequest("x"), { step: "hang", timeoutMs: 5000 })).rejects.toMatchObject({ code: Code.DEADLINE_EXCEEDED });
    expect(ms(t)).toBeLessThan(1000);
  });
});

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
    expect(ms(t)).toBeLessThan(2000);
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
        { outcome: Outcome.STREAM_BROKEN, chunksSent: 2, streamBreak: StreamBreak.HANG, status: [Code.DEADLINE_EXCEEDED, "cut off by the caller's deadline", []] },
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

describe("a scripted retry story", () => {
  it("drives a grpc-js client with a retry policy to success on the third attempt", async () => {
    server = await startStubServer(`
entries:
  - error: { code: UNAVAILABLE, message: "warming up", trailers: { retry-after-ms: "10" } }
  - error: { code: UNAVAILABLE, message: "still warming up" }
  - reply: "ready now"
`);
    const serviceConfig = {
      methodConfig: [
        {
          name: [{ service: "modelstub.v1.ModelService" }],
          retryPolicy: { maxAttempts: 3, initialBackoff: "0.01s", maxBackoff: "0.05s", backoffMultiplier: 2, retryableStatusCodes: ["UNAVAILABLE"] },
        },
      ],
    };
    const Client = makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService");
    const client = new Client(server.address, credentials.createInsecure(), { "grpc.service_config": JSON.stringify(serviceConfig) }) as unknown as {
      Generate(r: unknown, md: Metadata, cb: (e: ServiceError | null, r?: GenerateResponse) => void): void;
      close(): void;
    };
    try {
      const md = new Metadata();
      md.set("x-modelstub-session", "retry");
      const res = await new Promise<GenerateResponse>((resolve, reject) => client.Generate(userRequest("go"), md, (e, r) => (e ? reject(e) : resolve(r!))));
      expect(res.message?.content).toBe("ready now");
      const calls = server.stub.episode("retry").calls;
      expect(calls.map((c) => c.status?.code ?? grpcStatus.OK)).toEqual([Code.UNAVAILABLE, Code.UNAVAILABLE, Code.OK]);
    } finally {
      client.close();
    }
  });
});

describe("every failure is an outcome", () => {
  it("turns an exception inside a call into INTERNAL with a message, and keeps serving", async () => {
    let broken = true;
    const clock: Clock = {
      kind: "real",
      now: () => 0,
      sleep: () => (broken ? Promise.reject(new Error("the clock broke")) : Promise.resolve()),
    };
    server = await startStubServer("entries:\n  - latency: 5ms\n    repeat: true\n    reply: fine\n", { clock });
    await expect(server.port.generate(userRequest("x"))).rejects.toMatchObject({ code: Code.INTERNAL, details: "modelstub internal error: the clock broke" });
    broken = false;
    expect((await server.port.generate(userRequest("x"))).message?.content).toBe("fine");
  });
});

describe("cut-off calls", () => {
  let unhandled = 0;
  const onUnhandled = () => unhandled++;
  beforeAll(() => process.on("unhandledRejection", onUnhandled));
  afterAll(() => process.off("unhandledRejection", onUnhandled));

  const processListeners = () => Object.fromEntries(process.eventNames().map((e) => [String(e), process.listenerCount(e)]));
  const resources = () => {
    const counts: Record<string, number> = {};
    for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
    return counts;
  };

  it("release every timer and handle: 1,000 calls cut by deadline or cancel leave the process as it was", async () => {
    server = await startStubServer(`
steps:
  hang: [ { hang: true, repeat: true } ]
  slow: [ { latency: 10m, repeat: true, reply: x } ]
  slow-stream: [ { latency: { per_chunk: 10m }, repeat: true, reply: "a b c" } ]
`);
    const port = server.port;
    // Warm up so the channel and its connection exist in the baseline.
    await port.generate(userRequest("x"), { step: "hang", timeoutMs: 20 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    const before = resources();
    const listenersBefore = processListeners();
    const signals: AbortSignal[] = [];
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 1000; i++) {
      const step = ["hang", "slow", "slow-stream"][i % 3]!;
      if (i % 2 === 0) {
        const opts = { step, timeoutMs: 150 + (i % 100), session: `leak${i % 7}` };
        calls.push(step === "slow-stream" ? collect(port.generateStream(userRequest("x"), opts)) : code(port.generate(userRequest("x"), opts)));
      } else {
        const ac = new AbortController();
        signals.push(ac.signal);
        setTimeout(() => ac.abort(), 150 + (i % 100));
        const opts = { step, signal: ac.signal, session: `leak${i % 7}` };
        calls.push(step === "slow-stream" ? collect(port.generateStream(userRequest("x"), opts)) : code(port.generate(userRequest("x"), opts)));
      }
    }
    await Promise.all(calls);
    // Calls the client gave up on before the server saw them never start; every call that did
    // start must have ended and been recorded.
    const recordedCalls = () => server!.stub.sessions().reduce((n, s) => n + s.calls, 0);
    let last = -1;
    await expect
      .poll(
        () => {
          const settled = server!.stub.inFlight() === 0 && recordedCalls() === last;
          last = recordedCalls();
          return settled;
        },
        { timeout: 10_000, interval: 250 },
      )
      .toBe(true);
    expect(recordedCalls()).toBeGreaterThan(200);
    const outcomes = new Set(server.stub.sessions().flatMap((s) => server!.stub.episode(s.name).calls.map((c) => c.outcome)));
    expect([...outcomes].sort()).toEqual([Outcome.DEADLINE_EXCEEDED, Outcome.CANCELLED].sort());
    await new Promise((r) => setTimeout(r, 200));
    expect(resources()).toEqual(before);
    // Listeners too: none added to the process per call, and the port let go of every caller's signal.
    expect(processListeners()).toEqual(listenersBefore);
    expect(signals.filter((sig) => getEventListeners(sig, "abort").length > 0)).toHaveLength(0);
    expect(unhandled).toBe(0);
  });
});
