import { create } from "@bufbuild/protobuf";
import grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { ControlService, ResetSessionRequestSchema, DeleteSessionRequestSchema } from "../../gen/modelstub/v1/control_pb.js";
import { GenerateRequestSchema, GenerateStreamRequestSchema, ModelService, Role } from "../../gen/modelstub/v1/model_pb.js";
import { Health, HealthCheckRequestSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { startServer, type StubServer } from "../../src/index.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { startStubServer } from "../support/start-stub-server.js";

// Every answer says which instance gave it and which episode its session is in (issue 28,
// item 4): gRPC initial metadata and HTTP headers, x-modelstub-instance and x-modelstub-episode.

const script = `
entries:
  - match: { contains: FAIL }
    repeat: true
    error: { code: RESOURCE_EXHAUSTED, message: "scripted" }
  - repeat: true
    reply: "heard {{last_user}}"
`;

const Model = grpc.makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService");
const Control = grpc.makeGenericClientConstructor(serviceDefinition(ControlService), "ControlService");
const HealthClient = grpc.makeGenericClientConstructor(serviceDefinition(Health), "Health");

interface Answer {
  instance: string | undefined;
  episode: string | undefined;
  code: number;
}

const headerOf = (md: grpc.Metadata | undefined, key: string) => (md?.get(key)[0] as string | undefined) ?? undefined;

/**
 * What a client reads: the response headers (initial metadata) of an answer, or, for a call
 * that failed before any message, its one header block, which grpc-js gives as the status's
 * metadata ("trailers-only": so a retry policy can still retry it).
 */
function answerOf(head: grpc.Metadata | undefined, status: { code: number; metadata?: grpc.Metadata | undefined }): Answer {
  const md = head ?? status.metadata;
  return { instance: headerOf(md, "x-modelstub-instance"), episode: headerOf(md, "x-modelstub-episode"), code: status.code };
}

/** A unary call's initial metadata and status, whether it succeeded or failed. */
function unary(client: grpc.Client, method: string, request: unknown, session?: string): Promise<Answer> {
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    if (session) md.set("x-modelstub-session", session);
    let head: grpc.Metadata | undefined;
    const call = (client as unknown as Record<string, (...a: unknown[]) => grpc.ClientUnaryCall>)[method]!(request, md, (err: grpc.ServiceError | null) =>
      resolve(answerOf(head, err ?? { code: 0 })),
    );
    call.on("metadata", (m) => (head = m));
  });
}

function stream(client: grpc.Client, content: string, session: string): Promise<Answer> {
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    md.set("x-modelstub-session", session);
    let head: grpc.Metadata | undefined;
    const call = (client as unknown as { GenerateStream: (r: unknown, m: grpc.Metadata) => grpc.ClientReadableStream<unknown> }).GenerateStream(
      create(GenerateStreamRequestSchema, { messages: [{ role: Role.USER, content }] }),
      md,
    );
    call.on("metadata", (m) => (head = m));
    call.on("data", () => {});
    call.on("error", () => {}); // the status says it
    call.on("status", (s) => resolve(answerOf(head, s)));
  });
}

const say = (content: string) => create(GenerateRequestSchema, { messages: [{ role: Role.USER, content }] });

const open: { server: StubServer; clients: grpc.Client[] }[] = [];
async function serve(instance?: string) {
  const server = await startServer({ script, clock: "virtual", http: "127.0.0.1:0", ...(instance ? { instance } : {}) });
  const creds = grpc.credentials.createInsecure();
  const model = new Model(server.grpcAddress, creds);
  const control = new Control(server.grpcAddress, creds);
  const health = new HealthClient(server.grpcAddress, creds);
  open.push({ server, clients: [model, control, health] });
  const base = server.httpUrl!;
  const chat = async (content: string, session: string) => {
    const res = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: { "x-modelstub-session": session },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content }] }),
    });
    await res.arrayBuffer();
    return { instance: res.headers.get("x-modelstub-instance") ?? undefined, episode: res.headers.get("x-modelstub-episode") ?? undefined, code: res.status };
  };
  return { server, model, control, health, chat, base };
}

afterEach(async () => {
  for (const { server, clients } of open.splice(0)) {
    for (const c of clients) c.close();
    await server.close();
  }
});

describe("every answer names its instance and its session's episode", () => {
  it("over gRPC: unary, stream, a scripted error (trailers-only), a refused call and health all carry the instance", async () => {
    const s = await serve("ms-a");
    const first = await unary(s.model, "Generate", say("one"), "alice");
    expect(first).toMatchObject({ instance: "ms-a", code: 0 });
    expect(first.episode).toMatch(/^ms-a\/alice\/[0-9a-f]{8}\.\d+$/);
    expect(await stream(s.model, "two", "alice")).toEqual(first);
    expect(await unary(s.model, "Generate", say("FAIL"), "alice")).toEqual({ ...first, code: grpc.status.RESOURCE_EXHAUSTED });
    expect(await stream(s.model, "FAIL", "alice")).toEqual({ ...first, code: grpc.status.RESOURCE_EXHAUSTED });
    // A session name the server refuses has no episode, but the instance still answers.
    expect(await unary(s.model, "Generate", say("x"), "bad name!")).toEqual({ instance: "ms-a", episode: undefined, code: grpc.status.INVALID_ARGUMENT });
    expect(await unary(s.health, "Check", create(HealthCheckRequestSchema, {}))).toMatchObject({ instance: "ms-a", code: 0 });
    expect(await unary(s.health, "Check", create(HealthCheckRequestSchema, { service: "nope" }))).toMatchObject({
      instance: "ms-a",
      code: grpc.status.NOT_FOUND,
    });
  });

  it("over HTTP, the same instance and episode as gRPC for the session, on answers and errors alike", async () => {
    const s = await serve("ms-a");
    const viaGrpc = await unary(s.model, "Generate", say("one"), "bob");
    expect(await s.chat("two", "bob")).toEqual({ ...viaGrpc, code: 200 });
    expect(await s.chat("FAIL", "bob")).toEqual({ ...viaGrpc, code: 429 });
    const missing = await fetch(`${s.base}/nowhere`, { headers: { "x-modelstub-session": "bob" } });
    expect([missing.status, missing.headers.get("x-modelstub-instance"), missing.headers.get("x-modelstub-episode")]).toEqual([404, "ms-a", viaGrpc.episode]);
    // A session that does not exist yet gets its episode with its first call.
    const fresh = await s.chat("hi", "carol");
    expect(fresh.episode).toMatch(/^ms-a\/carol\//);
  });

  it("a new episode id after a reset, and after a deletion and first use again; the answer to the reset names the new one", async () => {
    const s = await serve("ms-a");
    const before = await unary(s.model, "Generate", say("one"), "dave");
    const reset = await unary(s.control, "ResetSession", create(ResetSessionRequestSchema, { session: "dave" }), "dave");
    const after = await unary(s.model, "Generate", say("two"), "dave");
    expect(after.episode).not.toBe(before.episode);
    expect(reset.episode).toBe(after.episode);
    await unary(s.control, "DeleteSession", create(DeleteSessionRequestSchema, { session: "dave" }), "dave");
    const reborn = await unary(s.model, "Generate", say("three"), "dave");
    expect(new Set([before.episode, after.episode, reborn.episode]).size).toBe(3);
  });

  it("a new episode id after idle eviction and first use again", async () => {
    const s = await startStubServer(script, { clock: "virtual", instance: "ms-e" });
    const model = new Model(s.address, grpc.credentials.createInsecure());
    try {
      const before = await unary(model, "Generate", say("one"), "gina");
      // The eviction --session-idle-timeout runs, called at once rather than waited for.
      const evicted = s.stub.evictIdle(0);
      expect(evicted.map((e) => e.name)).toEqual(["gina"]);
      await Promise.all(evicted.map((e) => e.closed));
      const after = await unary(model, "Generate", say("two"), "gina");
      expect(after.episode).toMatch(/^ms-e\/gina\//);
      expect(after.episode).not.toBe(before.episode);
    } finally {
      model.close();
      await s.close();
    }
  });

  it("a restarted instance that keeps its id never repeats an episode id; the episode's bytes hold neither", async () => {
    const one = await serve("ms-a");
    const a = await unary(one.model, "Generate", say("one"), "erin");
    const bytesA = one.server.control.episodeBytes("erin");
    const two = await serve("ms-a");
    const b = await unary(two.model, "Generate", say("one"), "erin");
    expect(b.instance).toBe(a.instance);
    expect(b.episode).not.toBe(a.episode);
    const other = await serve("ms-b");
    await unary(other.model, "Generate", say("one"), "erin");
    const bytesOther = other.server.control.episodeBytes("erin");
    expect(Buffer.from(bytesOther).equals(Buffer.from(bytesA))).toBe(true);
    expect(Buffer.from(bytesA).includes("ms-a")).toBe(false);
  });

  it("without --instance, the instance is host and process id; a bad one is refused", async () => {
    const s = await serve();
    const a = await unary(s.model, "Generate", say("one"), "fay");
    expect(a.instance).toMatch(new RegExp(`-${process.pid}$`));
    await expect(startServer({ script, instance: "has/slash" })).rejects.toThrow(/invalid instance id/);
  });
});
