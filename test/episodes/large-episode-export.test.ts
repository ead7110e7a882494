import { create, fromBinary, fromJsonString, toBinary } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata, Server, ServerCredentials, type Client, type ClientReadableStream, type ServerWritableStream, type ServiceError } from "@grpc/grpc-js";
import { spawn } from "node:child_process";
import { mkdtemp, open, readFile } from "node:fs/promises";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlService, ExportEpisodeRequestSchema, ExportEpisodeResponseSchema, GetEpisodeRequestSchema, type ExportEpisodeResponse, type GetEpisodeResponse } from "../../gen/modelstub/v1/control_pb.js";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { Code } from "../../src/engine/status-code.js";
import { controlServiceHandlers, exportChunkBytes } from "../../src/grpc/control-service.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { startGrpcServer } from "../../src/grpc/start-grpc-server.js";
import { createControlClient } from "../../src/port/control-client.js";
import { userRequest } from "../support/requests.js";
import { cliPath, repoRoot } from "../support/run-cli.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

const MiB = 1024 * 1024;
const defaultClientLimit = 4 * MiB;

// A plain grpc-js client with no channel options: the default 4 MiB receive limit, as grpc-go
// and grpcio have it.
const PlainControlClient = makeGenericClientConstructor(serviceDefinition(ControlService), "ControlService");
type PlainClient = Client & Record<string, (...args: unknown[]) => unknown>;

function plainClient(address: string): PlainClient {
  return new PlainControlClient(address, credentials.createInsecure()) as unknown as PlainClient;
}

function bearer(token: string): Metadata {
  const md = new Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
}

function getEpisode(client: PlainClient, request: { session: string; bytesOnly?: boolean }, md = new Metadata()): Promise<GetEpisodeResponse> {
  return new Promise((resolve, reject) => {
    client["GetEpisode"]!(create(GetEpisodeRequestSchema, request), md, { deadline: Date.now() + 20_000 }, (err: ServiceError | null, res: GetEpisodeResponse) => (err ? reject(err) : resolve(res)));
  });
}

function exportEpisode(client: PlainClient, request: { session: string }, md = new Metadata()): ClientReadableStream<ExportEpisodeResponse> {
  return client["ExportEpisode"]!(create(ExportEpisodeRequestSchema, request), md, { deadline: Date.now() + 20_000 }) as ClientReadableStream<ExportEpisodeResponse>;
}

async function collectMessages(stream: ClientReadableStream<ExportEpisodeResponse>): Promise<ExportEpisodeResponse[]> {
  const messages: ExportEpisodeResponse[] = [];
  for await (const m of stream) messages.push(m as ExportEpisodeResponse);
  return messages;
}

/** Records `calls` calls in `session`, each with a request of `size` bytes of text. */
async function recordCalls(s: StubServer, session: string, calls: number, size: number): Promise<void> {
  // Each request stays under the server's default 4 MiB receive limit: no option is raised.
  const text = "x".repeat(size);
  for (let i = 0; i < calls; i++) await s.port.generate(userRequest(text), { session });
}

/** Runs the built CLI with stdout to a file: its JSON for a 50 MB episode is larger than a pipe buffer is worth. */
async function runCliToFile(args: string[], stdoutPath: string): Promise<{ code: number; stderr: string }> {
  const stdout = await open(stdoutPath, "w");
  try {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, stdio: ["ignore", stdout.fd, "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number>((resolve) => child.on("exit", (c) => resolve(c ?? 1)));
    return { code, stderr };
  } finally {
    await stdout.close();
  }
}

describe("fetching a 50 MB episode with a client at default limits", () => {
  let s: StubServer;
  let client: PlainClient;
  let big: Buffer;
  let medium: Buffer;
  let dir: string;

  beforeAll(async () => {
    s = await startStubServer("entries:\n  - repeat: true\n    reply: ok\n");
    client = plainClient(s.address);
    dir = await mkdtemp(join(tmpdir(), "modelstub-large-episode-"));
    await recordCalls(s, "big", 15, 3_500_000); // 52.5 MB
    await recordCalls(s, "medium", 1, 3_000_000);
    big = Buffer.from(s.stub.episodeBytes("big"));
    medium = Buffer.from(s.stub.episodeBytes("medium"));
  }, 40_000);

  afterAll(async () => {
    client?.close();
    await s?.close();
  });

  it("GetEpisode without bytes_only fails on a 3 MB episode: it carries the episode twice, past 4 MiB", async () => {
    expect(medium.length).toBeGreaterThan(3_000_000);
    expect(medium.length).toBeLessThan(defaultClientLimit);
    await expect(getEpisode(client, { session: "medium" })).rejects.toMatchObject({ code: Code.RESOURCE_EXHAUSTED });
  });

  it("GetEpisode with bytes_only answers the same 3 MB episode within the limit, its bytes alone", async () => {
    const res = await getEpisode(client, { session: "medium", bytesOnly: true });
    expect(res.episode).toBeUndefined();
    expect(Buffer.compare(Buffer.from(res.episodeBinpb), medium)).toBe(0);
  });

  it("ExportEpisode streams the 50 MB episode in chunks of at most 1 MiB, byte-equal to what the server recorded", async () => {
    expect(big.length).toBeGreaterThan(50_000_000);
    const messages = await collectMessages(exportEpisode(client, { session: "big" }));
    expect(messages).toHaveLength(Math.ceil(big.length / exportChunkBytes));
    expect(messages.every((m) => m.chunk.length > 0 && m.chunk.length <= MiB)).toBe(true);
    // The first message announces the total and the calls; later ones carry bytes only.
    expect([messages[0]!.totalBytes, messages[0]!.calls]).toEqual([big.length, 15]);
    expect(messages.slice(1).every((m) => m.totalBytes === 0 && m.calls === 0)).toBe(true);
    expect(Buffer.compare(Buffer.concat(messages.map((m) => m.chunk)), big)).toBe(0);
  }, 30_000);

  it("the control client's exportEpisode reassembles the 50 MB episode and counts its calls", async () => {
    const exported = await s.control.exportEpisode("big");
    expect(exported.calls).toBe(15);
    expect(Buffer.compare(Buffer.from(exported.bytes), big)).toBe(0);
  }, 30_000);

  it("ExportEpisode treats sessions as GetEpisode does: an unseen one exports its empty episode, a bad name is INVALID_ARGUMENT", async () => {
    const [message, ...rest] = await collectMessages(exportEpisode(client, { session: "nobody" }));
    expect(rest).toHaveLength(0);
    expect(Buffer.from(message!.chunk)).toEqual(Buffer.from((await getEpisode(client, { session: "nobody" })).episodeBinpb));
    expect([message!.totalBytes, message!.calls]).toEqual([message!.chunk.length, 0]);
    await expect(collectMessages(exportEpisode(client, { session: "no/slashes" }))).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
  });

  it("modelstub episode --addr --out streams the 50 MB episode: the file holds its bytes and stdout its JSON", async () => {
    const out = join(dir, "big.binpb");
    const printed = join(dir, "big.json");
    const run = await runCliToFile(["episode", "--addr", s.address, "--session", "big", "--out", out], printed);
    expect(run).toEqual({ code: 0, stderr: "" });
    expect(Buffer.compare(await readFile(out), big)).toBe(0);
    expect(Buffer.compare(Buffer.from(toBinary(EpisodeSchema, fromJsonString(EpisodeSchema, await readFile(printed, "utf8")))), big)).toBe(0);
  }, 30_000);

  it("modelstub episode falls back to GetEpisode with bytes_only on a server without ExportEpisode", async () => {
    // A server from before ExportEpisode: grpc-js answers UNIMPLEMENTED for a method with no handler.
    const { ExportEpisode: _, ...older } = controlServiceHandlers(s.stub);
    const server = new Server();
    server.addService(serviceDefinition(ControlService), older);
    const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    try {
      const out = join(dir, "medium.binpb");
      const run = await runCliToFile(["episode", "--addr", `127.0.0.1:${port}`, "--session", "medium", "--out", out], join(dir, "medium.json"));
      expect(run).toEqual({ code: 0, stderr: "" });
      expect(Buffer.compare(await readFile(out), medium)).toBe(0);
    } finally {
      server.forceShutdown();
    }
  });

  it("the control token applies to ExportEpisode", async () => {
    const guarded = await startGrpcServer({ stub: s.stub, address: "127.0.0.1:0", controlToken: "secret" });
    const c = plainClient(guarded.address);
    try {
      await expect(collectMessages(exportEpisode(c, { session: "medium" }))).rejects.toMatchObject({ code: Code.UNAUTHENTICATED, details: expect.stringContaining("authorization: Bearer") });
      await expect(collectMessages(exportEpisode(c, { session: "medium" }, bearer("wrong")))).rejects.toMatchObject({ code: Code.UNAUTHENTICATED, details: "wrong control token" });
      const control = createControlClient(guarded.address, { token: "secret" });
      try {
        expect(Buffer.compare(Buffer.from((await control.exportEpisode("medium")).bytes), medium)).toBe(0);
      } finally {
        control.close();
      }
    } finally {
      c.close();
      await guarded.close(1000);
    }
  });

  /** A server running the ExportEpisode handler watched: the listeners it finds on each call, and the writes it makes. */
  async function watchedServer() {
    const watched: { call: ServerWritableStream<unknown, unknown>; drain: number; cancelled: number; writes: number }[] = [];
    const handlers = controlServiceHandlers(s.stub);
    const exportHandler = handlers["ExportEpisode"] as (call: ServerWritableStream<unknown, unknown>) => void;
    handlers["ExportEpisode"] = (call: ServerWritableStream<unknown, unknown>) => {
      const w = { call, drain: call.listenerCount("drain"), cancelled: call.listenerCount("cancelled"), writes: 0 };
      watched.push(w);
      // Every argument goes through: the export counts its chunks written by write()'s callback.
      const write = call.write.bind(call) as (...args: unknown[]) => boolean;
      call.write = ((...args: unknown[]) => (w.writes++, write(...args))) as typeof call.write;
      exportHandler(call);
    };
    const server = new Server();
    server.addService(serviceDefinition(ControlService), handlers);
    const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    return { watched, address: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
  }

  it("a cancelled export stops writing and removes its listeners from the call", async () => {
    const server = await watchedServer();
    const c = plainClient(server.address);
    try {
      const stream = exportEpisode(c, { session: "big" });
      const ended = new Promise<ServiceError>((resolve) => stream.on("error", resolve));
      stream.once("data", () => stream.cancel());
      expect((await ended).code).toBe(Code.CANCELLED);
      const [w] = server.watched;
      // The export waits on back-pressure once two chunks are unwritten; the cancel wakes it.
      await expect.poll(() => [w!.call.listenerCount("drain"), w!.call.listenerCount("cancelled")]).toEqual([w!.drain, w!.cancelled]);
      expect(w!.writes).toBeLessThan(Math.ceil(big.length / exportChunkBytes));
    } finally {
      c.close();
      server.close();
    }
  });

  it("an export to a reader that stops reading holds at most two chunks, and finishes byte-equal once it reads again", async () => {
    // Waiting only for 'drain' let grpc-js take 16 chunks (16 MiB) before write() said false.
    const server = await watchedServer();
    const session = connect(`http://${server.address}`);
    session.on("error", () => {});
    try {
      const body = toBinary(ExportEpisodeRequestSchema, create(ExportEpisodeRequestSchema, { session: "big" }));
      const framed = Buffer.alloc(5 + body.length);
      framed.writeUInt32BE(body.length, 1);
      framed.set(body, 5);
      const stream = session.request({ ":method": "POST", ":path": "/modelstub.v1.ControlService/ExportEpisode", "content-type": "application/grpc", te: "trailers" });
      stream.end(framed);
      // Never read until told: the stream's HTTP/2 window closes after 64 KiB and stays closed.
      stream.pause();
      await expect.poll(() => server.watched[0]?.writes ?? 0).toBeGreaterThan(0);
      // Let the writes settle: a count unchanged over 500 ms.
      let writes = -1;
      while (writes !== server.watched[0]!.writes) {
        writes = server.watched[0]!.writes;
        await new Promise((r) => setTimeout(r, 500));
      }
      // The first chunk goes, the second finds one unwritten and waits for both.
      expect(writes).toBeLessThanOrEqual(2);

      const data: Buffer[] = [];
      stream.on("data", (d: Buffer) => data.push(d));
      const trailers = new Promise<Record<string, unknown>>((resolve) => stream.on("trailers", resolve));
      stream.resume();
      await new Promise((resolve, reject) => stream.on("end", resolve).on("error", reject));
      expect((await trailers)["grpc-status"]).toBe("0");
      // The gRPC messages in the DATA received: 5-byte prefixes, then ExportEpisodeResponses.
      const all = Buffer.concat(data);
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < all.length; ) {
        const length = all.readUInt32BE(at + 1);
        chunks.push(fromBinary(ExportEpisodeResponseSchema, all.subarray(at + 5, at + 5 + length)).chunk);
        at += 5 + length;
      }
      expect(chunks).toHaveLength(Math.ceil(big.length / exportChunkBytes));
      expect(server.watched[0]!.writes).toBe(chunks.length);
      expect(Buffer.compare(Buffer.concat(chunks), big)).toBe(0);
    } finally {
      session.destroy();
      server.close();
    }
  }, 30_000);

  it("exports one snapshot: a call recorded while the chunks go out is not in them", async () => {
    const stream = exportEpisode(client, { session: "big" });
    const messages: ExportEpisodeResponse[] = [];
    let recorded: Promise<unknown> | undefined;
    stream.on("data", (m: ExportEpisodeResponse) => {
      messages.push(m);
      if (!recorded) {
        stream.pause();
        recorded = s.port.generate(userRequest("late"), { session: "big" }).then(() => stream.resume());
      }
    });
    await new Promise((resolve, reject) => stream.on("end", resolve).on("error", reject));
    await recorded;
    expect(s.stub.episodeBytes("big").length).toBeGreaterThan(big.length);
    expect([messages[0]!.totalBytes, messages[0]!.calls]).toEqual([big.length, 15]);
    expect(Buffer.compare(Buffer.concat(messages.map((m) => m.chunk)), big)).toBe(0);
  }, 30_000);
});
