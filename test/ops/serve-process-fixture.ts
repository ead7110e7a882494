import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, type ClientReadableStream } from "@grpc/grpc-js";
import { afterAll, beforeAll, expect } from "vitest";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { createControlClient } from "../../src/port/control-client.js";
import { repoRoot, startServeProcess } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * What the tests of `modelstub serve` run as a child process share: buf curl, a scratch folder,
 * and waits on what the server says about itself (sessions running, health, log lines).
 */

const buf = join(repoRoot, "node_modules/.bin/buf");

export function bufCurl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(buf, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: testTimeoutMs(15_000) }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

/** The scratch folder of the test file that calls useScratchDir(): set before its tests run. */
export let dir: string;

/** Gives the calling test file a scratch folder, `dir`, removed after its tests. */
export function useScratchDir(): void {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "modelstub-ops-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
}

export type ServeProcess = Awaited<ReturnType<typeof startServeProcess>>;

/** Runs `modelstub serve` for the length of `use`, then SIGTERM; resolves with its stderr once it has exited 0. */
export async function withServe(args: string[], env: NodeJS.ProcessEnv, use: (s: ServeProcess) => Promise<void>): Promise<string> {
  const s = await startServeProcess(args, { env });
  try {
    await use(s);
  } finally {
    // Once only: a second signal would cut the graceful shutdown short.
    if (!s.child.killed) s.child.kill("SIGTERM");
  }
  expect(await s.exit).toBe(0);
  return s.output().stderr;
}

/**
 * Resolves once `session` has `n` calls running on the server: a test acts on a call in flight
 * only once the server has it, however slowly a loaded machine delivers it (never after a sleep).
 */
export async function untilRunning(address: string, session: string, n: number): Promise<void> {
  const control = createControlClient(address);
  try {
    await expect
      .poll(async () => (await control.call("ListSessions", {})).sessions.find((x) => x.name === session)?.running ?? 0, { timeout: testTimeoutMs(15_000) })
      .toBe(n);
  } finally {
    control.close();
  }
}

/** Resolves once the server's health service says NOT_SERVING: the drain a signal starts has begun. */
export async function untilDraining(address: string): Promise<void> {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as {
    Check(request: unknown, callback: (err: Error | null, res?: HealthCheckResponse) => void): void;
    close(): void;
  };
  const status = () =>
    new Promise<string>((resolve) =>
      client.Check(create(HealthCheckRequestSchema, { service: "" }), (err, res) => resolve(err ? err.message : ServingStatus[res!.status])),
    );
  try {
    await expect.poll(status, { timeout: testTimeoutMs(15_000) }).toBe("NOT_SERVING");
  } finally {
    client.close();
  }
}

/** The JSON log lines of a server's stderr with msg "call". */
export function callLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l["msg"] === "call");
}

/** A self-signed certificate and its key, for `subjectAltName` (like DNS:localhost,IP:127.0.0.1). */
export async function selfSigned(name: string, subjectAltName: string): Promise<{ cert: string; key: string }> {
  const key = join(dir, `${name}.key.pem`);
  const cert = join(dir, `${name}.cert.pem`);
  await new Promise<void>((resolve, reject) =>
    execFile(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        `/CN=${name}`,
        "-addext",
        `subjectAltName=${subjectAltName}`,
      ],
      (e) => (e ? reject(e) : resolve()),
    ),
  );
  return { cert, key };
}

const HealthClient = makeGenericClientConstructor(serviceDefinition(Health), "Health");

/** An open grpc.health.v1 Watch of the whole server: the statuses it streamed, and how it ended. */
export interface HealthWatch {
  /** Every status received, by name (`SERVING`, ...), in order. */
  statuses: string[];
  /** Resolves with `status N` when the server ends the watch, `error N` when it fails. */
  ended: Promise<string>;
  /** Cancels the watch (if still open) and closes its client. */
  close(): void;
}

/** Opens a Watch on `address` (service "", the whole server). */
export function watchHealth(address: string): HealthWatch {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as {
    Watch(request: unknown): ClientReadableStream<HealthCheckResponse>;
    close(): void;
  };
  const watch = client.Watch(create(HealthCheckRequestSchema, { service: "" }));
  const statuses: string[] = [];
  watch.on("data", (r: HealthCheckResponse) => statuses.push(ServingStatus[r.status]!));
  const ended = new Promise<string>((resolve) => {
    watch.on("status", (st: { code: number }) => resolve(`status ${st.code}`));
    watch.on("error", (e: { code?: number }) => resolve(`error ${e.code}`));
  });
  return {
    statuses,
    ended,
    close() {
      watch.cancel();
      client.close();
    },
  };
}
