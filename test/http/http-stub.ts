import { request } from "node:http";
import OpenAI from "openai";
import { createRealClock, createVirtualClock } from "../../src/engine/clock.js";
import { createStub, type Stub, type StubOptions } from "../../src/engine/create-stub.js";
import { defaultScript } from "../../src/script/default-script.js";
import { loadScriptText } from "../../src/script/load-script.js";
import type { HttpRequestLog } from "../../src/http/http-log.js";
import { startHttpServer, type RunningHttpServer } from "../../src/http/start-http-server.js";

/** A stub served over the HTTP front on a free loopback port, with the log records it wrote. */
export interface HttpStub {
  stub: Stub;
  server: RunningHttpServer;
  /** http://127.0.0.1:PORT */
  base: string;
  logs: HttpRequestLog[];
  /** When each record of `logs` was written (performance.now(), ms): a request's end, as the server saw it. */
  loggedAt: number[];
  /** An official OpenAI client pointed at this server (`/v1` base URL). */
  client(options?: { session?: string; step?: string; maxRetries?: number }): OpenAI;
  close(): Promise<void>;
}

/** Starts a stub serving `scriptText` (the built-in default script when undefined) over HTTP. */
export async function startHttpStub(
  scriptText: string | undefined,
  opts: {
    clock?: "real" | "virtual";
    limits?: Pick<StubOptions, "maxSessions" | "maxEpisodeCalls" | "maxEpisodeBytes">;
    processingComments?: boolean;
    token?: string;
    maxBodyBytes?: number;
  } = {},
): Promise<HttpStub> {
  const script = scriptText === undefined ? defaultScript() : loadScriptText(scriptText, "test.yaml");
  const stub = createStub({ script, clock: opts.clock === "real" ? createRealClock() : createVirtualClock(), ...opts.limits });
  const logs: HttpRequestLog[] = [];
  const loggedAt: number[] = [];
  const server = await startHttpServer({
    stub,
    address: "127.0.0.1:0",
    processingComments: opts.processingComments,
    token: opts.token,
    maxBodyBytes: opts.maxBodyBytes,
    log: (r) => {
      logs.push(r);
      loggedAt.push(performance.now());
    },
  });
  const base = `http://${server.address}`;
  return {
    stub,
    server,
    base,
    logs,
    loggedAt,
    client(o = {}) {
      const headers: Record<string, string> = {};
      if (o.session) headers["x-modelstub-session"] = o.session;
      if (o.step) headers["x-modelstub-step"] = o.step;
      return new OpenAI({ baseURL: `${base}/v1`, apiKey: "not-needed", maxRetries: o.maxRetries ?? 0, defaultHeaders: headers });
    },
    close: () => server.close(1000),
  };
}

/**
 * A raw HTTP exchange: status, headers as sent (no Date), body bytes, and how it ended. The two
 * headers that name the answering process and its episode (x-modelstub-instance and
 * x-modelstub-episode, different in every process by design) are kept apart in `identity`, so
 * `headers` is what must be byte-identical across runs.
 */
export interface RawExchange {
  status: number;
  headers: [string, string][];
  identity: [string, string][];
  body: Buffer;
  /** Set when the connection ended before a complete answer. */
  error?: string;
}

const identityHeaders = new Set(["x-modelstub-instance", "x-modelstub-episode"]);

/** Sends one request with node:http and keeps every byte of the answer. */
export function rawRequest(base: string, method: string, path: string, body?: string | object, headers: Record<string, string> = {}): Promise<RawExchange> {
  const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      new URL(path, base),
      { method, headers: { ...(text !== undefined ? { "content-type": "application/json" } : {}), ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        const pairs: [string, string][] = [];
        const identity: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!.toLowerCase();
          (identityHeaders.has(name) ? identity : pairs).push([name, res.rawHeaders[i + 1]!]);
        }
        const done = (error?: string) =>
          resolve({ status: res.statusCode ?? 0, headers: pairs, identity, body: Buffer.concat(chunks), ...(error ? { error } : {}) });
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => done());
        res.on("error", (e) => done(e.message));
        res.on("aborted", () => done("aborted"));
      },
    );
    req.on("error", (e) => resolve({ status: 0, headers: [], identity: [], body: Buffer.alloc(0), error: e.message }));
    if (text !== undefined) req.write(text);
    req.end();
  });
}

/** The `data:` payloads of an SSE body, in order. */
export function sseData(body: Buffer | string): string[] {
  return String(body)
    .split("\n\n")
    .filter((e) => e.length > 0)
    .map((e) => {
      if (!e.startsWith("data: ")) throw new Error(`not an SSE data event: ${JSON.stringify(e)}`);
      return e.slice("data: ".length);
    });
}
