import { credentials, makeGenericClientConstructor, Metadata, status as grpcStatus, type ServiceError } from "@grpc/grpc-js";
import { getEventListeners } from "node:events";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { ModelService, type GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { Clock } from "../../src/engine/clock.js";
import { Code } from "../../src/index.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { code } from "./failure-fixture.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
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
        { interval: 250 },
      )
      .toBe(true);
    expect(recordedCalls()).toBeGreaterThan(200);
    const outcomes = new Set(server.stub.sessions().flatMap((s) => server!.stub.episode(s.name).calls.map((c) => c.outcome)));
    expect([...outcomes].sort()).toEqual([Outcome.DEADLINE_EXCEEDED, Outcome.CANCELLED].sort());
    // Handles close as their events arrive: wait for it, however slowly a loaded machine gets there.
    await expect.poll(() => resources()).toEqual(before);
    // Listeners too: none added to the process per call, and the port let go of every caller's signal.
    expect(processListeners()).toEqual(listenersBefore);
    expect(signals.filter((sig) => getEventListeners(sig, "abort").length > 0)).toHaveLength(0);
    expect(unhandled).toBe(0);
  });
});
