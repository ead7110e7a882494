import { create, toBinary } from "@bufbuild/protobuf";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { constants, type ClientHttp2Stream } from "node:http2";
import { GenerateStreamRequestSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { codeName, grpcFrame, rawSession, running } from "./harness.js";
import type { IsolationServer } from "./bystander.js";
import { userRequest } from "../support/requests.js";

/*
 * The attacks of issue 27 (bystander.test.ts runs each beside the bystander), each bounded in
 * count and in time, on loopback. An attack returns what it saw (`notes`, for the figures) and
 * what went against its own promise (`failures`: a pathological input not refused, an echo not
 * clipped, a stalled call not released).
 */

export interface AttackReport {
  notes: string[];
  failures: string[];
}

/** Runs beside the bystander; `bystanderDone` settles when the bystander's calls are over. */
export type Attack = (server: IsolationServer, bystanderDone: Promise<unknown>) => Promise<AttackReport>;

/** `[`×depth then `]`×depth. */
export const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/**
 * Sends `text` `times` times, one after another, as LoadScript's script or SetFaultPlan's plan
 * to the session "attacker". Each must be refused INVALID_ARGUMENT or RESOURCE_EXHAUSTED.
 */
export function repeatedControl(method: "LoadScript" | "SetFaultPlan", text: string, times: number): Attack {
  return async (server) => {
    const notes: string[] = [];
    const failures: string[] = [];
    for (let i = 0; i < times && server.exited() === undefined; i++) {
      const started = performance.now();
      const request =
        method === "LoadScript" ? { session: "attacker", script: text, sourceName: "deep.yaml" } : { session: "attacker", plan: text, sourceName: "deep.yaml" };
      let code = 0;
      let details = "";
      try {
        await server.control.call(method, request, { timeoutMs: 60_000 });
      } catch (err) {
        code = (err as { code?: number }).code ?? -1;
        details = (err as { details?: string }).details ?? (err as Error).message;
      }
      const ms = performance.now() - started;
      notes.push(`${method} #${i + 1}: ${codeName(code)} in ${ms.toFixed(0)} ms`);
      if (codeName(code) !== "INVALID_ARGUMENT" && codeName(code) !== "RESOURCE_EXHAUSTED")
        failures.push(`${method} #${i + 1} answered ${codeName(code)} ${details.slice(0, 200)}`);
    }
    return { notes, failures };
  };
}

/** The HTTP fronts: their path, and a request of theirs carrying `content` as the user's message. */
export const dialects = {
  chat: { path: "/v1/chat/completions", body: (content: unknown, extra: object = {}) => ({ model: "m", messages: [{ role: "user", content }], ...extra }) },
  responses: { path: "/v1/responses", body: (content: unknown, extra: object = {}) => ({ model: "m", input: [{ role: "user", content }], ...extra }) },
  messages: {
    path: "/v1/messages",
    body: (content: unknown, extra: object = {}) => ({ model: "m", max_tokens: 1024, messages: [{ role: "user", content }], ...extra }),
  },
} as const;
export type Dialect = keyof typeof dialects;

/** A body of about 1.04 million empty messages (`{}`, 3.1 MB) in the dialect's list of messages. */
export function millionMessages(dialect: Dialect): string {
  const list = `[${"{},".repeat(1_040_000 - 1)}{}]`;
  const field = dialect === "responses" ? "input" : "messages";
  const head = JSON.stringify({ ...dialects[dialect].body("x"), [field]: "LIST" });
  return head.replace('"LIST"', list);
}

/** A 3 MB `role` (chat, messages) or `type` (responses) that a 400 would echo. */
export function echoedField(dialect: Dialect): string {
  const huge = "x".repeat(3_000_000);
  if (dialect === "responses") return JSON.stringify({ model: "m", input: [{ type: huge, role: "user", content: "hi" }] });
  return JSON.stringify({ ...dialects[dialect].body("hi"), messages: [{ role: huge, content: "hi" }] });
}

/**
 * POSTs `body` to the dialect `times` times, one after another (session "attacker"): each must
 * answer 400, in a body of at most `maxBodyBytes` when given.
 */
export function repeatedPost(dialect: Dialect, body: string, times: number, maxBodyBytes?: number): Attack {
  return async (server) => {
    const notes: string[] = [];
    const failures: string[] = [];
    for (let i = 0; i < times && server.exited() === undefined; i++) {
      const started = performance.now();
      let status = 0;
      let answer = "";
      try {
        const res = await fetch(new URL(dialects[dialect].path, server.http), {
          method: "POST",
          headers: { "content-type": "application/json", "x-modelstub-session": "attacker" },
          body,
          signal: AbortSignal.timeout(60_000),
        });
        status = res.status;
        answer = await res.text();
      } catch (err) {
        answer = `error: ${(err as Error).message}`;
      }
      const ms = performance.now() - started;
      const bytes = Buffer.byteLength(answer);
      notes.push(`POST ${dialects[dialect].path} #${i + 1}: ${status} in ${ms.toFixed(0)} ms, ${bytes} bytes`);
      if (status !== 400) failures.push(`POST ${dialects[dialect].path} #${i + 1} answered ${status} ${answer.slice(0, 200)}`);
      if (maxBodyBytes !== undefined && bytes > maxBodyBytes)
        failures.push(`POST ${dialects[dialect].path} #${i + 1}: a ${bytes}-byte 400 body, over ${maxBodyBytes} bytes (the echoed value is not clipped)`);
    }
    return { notes, failures };
  };
}

/** ~960 KB of user message in 5-letter words (as test/regressions/stalled-readers.test.ts). */
export const wordEcho = `PROBE-ECHO ${"word ".repeat(192_000)}`;
/**
 * ~960 KB of words of control characters, which JSON writes six bytes each: 5.8 MB of events
 * per reply, more than loopback's socket buffers take, so the server's own back-pressure is what
 * holds an SSE stream (as test/regressions/stalled-readers.test.ts).
 */
export const controlEcho = `PROBE-ECHO ${"\u0001".repeat(5).concat(" ").repeat(160_000)}`;

/** Polls `done` every 200 ms for up to `ms`. */
async function until(done: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await done().catch(() => false)) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Opens `count` streams of a large echo on the front, in session "stalled", and never reads
 * them: gRPC GenerateStream on one HTTP/2 connection (paused), SSE on raw sockets that never
 * read. They must all be running (held by their readers) within 60 s; they stay open until the
 * bystander is done, and must all end within 15 s of being cancelled.
 */
export function stalledReaders(front: "grpc" | Dialect, count: number): Attack {
  return async (server, bystanderDone) => {
    const notes: string[] = [];
    const failures: string[] = [];
    const started = performance.now();
    let cancel: () => void;
    if (front === "grpc") {
      const session = rawSession(server.address);
      const message = grpcFrame(
        toBinary(GenerateStreamRequestSchema, create(GenerateStreamRequestSchema, { messages: [{ role: Role.USER, content: wordEcho }] })),
      );
      const streams: ClientHttp2Stream[] = [];
      for (let i = 0; i < count; i++) {
        const s = session.request({
          ":method": "POST",
          ":path": "/modelstub.v1.ModelService/GenerateStream",
          "content-type": "application/grpc",
          te: "trailers",
          "x-modelstub-session": "stalled",
        });
        s.on("error", () => {});
        s.end(message);
        s.pause();
        streams.push(s);
      }
      cancel = () => {
        for (const s of streams) s.close(constants.NGHTTP2_CANCEL);
        session.destroy();
      };
    } else {
      // A raw socket per stream that never reads (an HTTP client's paused response may go on
      // buffering in the client process, and then nothing would hold the call), opened by a
      // child process: the bodies' 371 MB would otherwise be written by the process that times
      // the bystander's calls.
      const dir = mkdtempSync(join(tmpdir(), "modelstub-stalled-"));
      const bodyFile = join(dir, "body.json");
      writeFileSync(bodyFile, JSON.stringify(dialects[front].body(controlEcho, { stream: true })));
      const { hostname, port } = new URL(server.http);
      const child = spawn(
        process.execPath,
        [fileURLToPath(new URL("./stalled-http-readers.mjs", import.meta.url)), hostname, port, dialects[front].path, bodyFile, String(count)],
        { stdio: ["pipe", "ignore", "inherit"] },
      );
      const exited = new Promise((resolve) => child.once("exit", resolve));
      cancel = () => {
        child.kill("SIGTERM");
        void exited.then(() => rmSync(dir, { recursive: true, force: true }));
      };
    }
    const held = await until(async () => (await running(server.control, "stalled")) === count, 60_000);
    notes.push(
      `${count} streams ${held ? "all running" : `not all running (${await running(server.control, "stalled").catch(() => "?")})`} after ${(performance.now() - started).toFixed(0)} ms`,
    );
    if (!held) failures.push(`${count} stalled ${front} streams: not all running after 60 s`);
    await bystanderDone;
    cancel();
    const released = await until(async () => (await running(server.control, "stalled")) === 0, 15_000);
    if (!released) failures.push(`stalled ${front} streams: calls still running 15 s after the cancels`);
    return { notes, failures };
  };
}

/** `count` GenerateStream calls of a ~960 KB echo at once on one channel, read to their end (each within 120 s). */
export function streamedEchoes(count: number): Attack {
  return async (server) => {
    const port = openGrpcPort(server.address);
    const started = performance.now();
    const failures: string[] = [];
    const ends = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        try {
          for await (const _ of port.generateStream(userRequest(wordEcho), { session: "echoes", timeoutMs: 120_000 }));
        } catch (err) {
          failures.push(`echo ${i}: ${(err as Error).message}`);
        }
        return performance.now() - started;
      }),
    );
    port.close();
    return { notes: [`${count} streamed echoes read in ${Math.max(...ends).toFixed(0)} ms`], failures };
  };
}
