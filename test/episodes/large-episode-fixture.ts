import { create } from "@bufbuild/protobuf";
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  Server,
  ServerCredentials,
  type Client,
  type ClientReadableStream,
  type ServerWritableStream,
  type ServiceError,
} from "@grpc/grpc-js";
import { spawn } from "node:child_process";
import { mkdtemp, open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import {
  ControlService,
  ExportEpisodeRequestSchema,
  GetEpisodeRequestSchema,
  type ExportEpisodeResponse,
  type GetEpisodeResponse,
} from "../../gen/modelstub/v1/control_pb.js";
import { controlServiceHandlers } from "../../src/grpc/control-service.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { userRequest } from "../support/requests.js";
import { cliPath, repoRoot } from "../support/run-cli.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/** A server holding a 50 MB episode (session "big") and a 3 MB one ("medium"), and clients at default limits to fetch them. */

export const MiB = 1024 * 1024;
export const defaultClientLimit = 4 * MiB;

// A plain grpc-js client with no channel options: the default 4 MiB receive limit, as grpc-go
// and grpcio have it.
const PlainControlClient = makeGenericClientConstructor(serviceDefinition(ControlService), "ControlService");
export type PlainClient = Client & Record<string, (...args: unknown[]) => unknown>;

export function plainClient(address: string): PlainClient {
  return new PlainControlClient(address, credentials.createInsecure()) as unknown as PlainClient;
}

export function bearer(token: string): Metadata {
  const md = new Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
}

export function getEpisode(
  client: PlainClient,
  request: { session: string; bytesOnly?: boolean; allowMissing?: boolean },
  md = new Metadata(),
): Promise<GetEpisodeResponse> {
  return new Promise((resolve, reject) => {
    client["GetEpisode"]!(
      create(GetEpisodeRequestSchema, request),
      md,
      { deadline: Date.now() + 20_000 },
      (err: ServiceError | null, res: GetEpisodeResponse) => (err ? reject(err) : resolve(res)),
    );
  });
}

export function exportEpisode(
  client: PlainClient,
  request: { session: string; allowMissing?: boolean },
  md = new Metadata(),
): ClientReadableStream<ExportEpisodeResponse> {
  return client["ExportEpisode"]!(create(ExportEpisodeRequestSchema, request), md, {
    deadline: Date.now() + 20_000,
  }) as ClientReadableStream<ExportEpisodeResponse>;
}

export async function collectMessages(stream: ClientReadableStream<ExportEpisodeResponse>): Promise<ExportEpisodeResponse[]> {
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
export async function runCliToFile(args: string[], stdoutPath: string): Promise<{ code: number; stderr: string }> {
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

/** Set by recordLargeEpisodes() before the tests of the describe that calls it. */
export let s: StubServer;
export let client: PlainClient;
export let big: Buffer;
export let medium: Buffer;
export let dir: string;

/** Starts the server, records the two episodes and opens a plain client, for the calling describe. */
export function recordLargeEpisodes(): void {
  beforeAll(async () => {
    s = await startStubServer("entries:\n  - repeat: true\n    reply: ok\n");
    client = plainClient(s.address);
    dir = await mkdtemp(join(tmpdir(), "modelstub-large-episode-"));
    await recordCalls(s, "big", 15, 3_500_000); // 52.5 MB
    await recordCalls(s, "medium", 1, 3_000_000);
    big = Buffer.from(s.stub.episodeBytes("big"));
    medium = Buffer.from(s.stub.episodeBytes("medium"));
  }, testTimeoutMs(40_000));

  afterAll(async () => {
    client?.close();
    await s?.close();
  });
}

/** A server running the ExportEpisode handler watched: the listeners it finds on each call, and the writes it makes. */
export async function watchedServer() {
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
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { watched, address: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
}
