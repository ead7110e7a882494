import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { defaultScript } from "../../src/script/default-script.js";
import { startHttpServer, type RunningHttpServer } from "../../src/http/start-http-server.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

const user = { role: "user", content: "PROBE-ECHO hi" };

/** Sends `head` as raw bytes and resolves with everything the server answered once it closes. */
function rawExchange(port: number, head: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => {});
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.end(head);
  });
}

/** A parameters object nested `depth` levels deep, as text (JSON.stringify of it would overflow). */
function deepParameters(depth: number): string {
  return `${'{"a":'.repeat(depth)}{}${"}".repeat(depth)}`;
}

describe("the HTTP front under hostile requests", () => {
  let s: HttpStub;
  beforeAll(async () => {
    s = await startHttpStub(undefined);
  });
  afterAll(() => s.close());

  it.each([
    ["a truncated percent-escape in a model id", "/v1/models/%E0%A4%A"],
    ["a percent-escape that is not UTF-8", "/v1/models/%FF"],
    ["a lone percent sign", "/v1/models/100%"],
  ])("answers 400 invalid_path, not 500, to %s", async (_what, path) => {
    const r = await rawRequest(s.base, "GET", path);
    expect(r.status).toBe(400);
    const body = JSON.parse(String(r.body));
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_path" });
    expect(body.error.message).toContain("percent-encoding");
  });

  it("answers 400 to a request target that is not a URL, and keeps serving", async () => {
    const answer = await rawExchange(s.server.port, "GET http://[::1 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"invalid_path"');
    expect((await rawRequest(s.base, "GET", "/v1/models")).status).toBe(200);
  });

  it("answers 400 to tool parameters nested 100,000 deep, and keeps serving", async () => {
    const body = `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":${deepParameters(100_000)}}}]}`;
    const r = await rawRequest(s.base, "POST", "/v1/chat/completions", body);
    expect(r.status).toBe(400);
    expect(JSON.parse(String(r.body)).error).toMatchObject({ code: "invalid_value", message: expect.stringContaining("deeper than 128 levels") });
    const ok = await rawRequest(s.base, "POST", "/v1/chat/completions", { messages: [user] });
    expect(ok.status).toBe(200);
  });

  it("still reads tool parameters nested 100 deep", async () => {
    const body = `{"messages":[${JSON.stringify(user)}],"tools":[{"type":"function","function":{"name":"t","parameters":${deepParameters(100)}}}]}`;
    expect((await rawRequest(s.base, "POST", "/v1/chat/completions", body)).status).toBe(200);
  });

  it.each([
    ["10,001 messages", { messages: Array.from({ length: 10_001 }, () => ({ role: "user", content: "" })) }, "messages", "10001 messages", "10000"],
    [
      "1,001 tools",
      { messages: [user], tools: Array.from({ length: 1001 }, () => ({ type: "function", function: { name: "t" } })) },
      "tools",
      "1001 tools",
      "1000",
    ],
    [
      "1,001 tool calls in one message",
      {
        messages: [
          user,
          {
            role: "assistant",
            tool_calls: Array.from({ length: 1001 }, (_, i) => ({ id: `c${i}`, type: "function", function: { name: "t", arguments: "{}" } })),
          },
        ],
      },
      "messages[1].tool_calls",
      "1001 tool calls",
      "1000",
    ],
  ])("refuses %s with 400, naming the field, the count and the limit", async (_what, body, param, count, limit) => {
    const r = await rawRequest(s.base, "POST", "/v1/chat/completions", body);
    expect(r.status).toBe(400);
    const error = JSON.parse(String(r.body)).error;
    expect(error).toMatchObject({ param, code: "too_many_items" });
    expect(error.message).toContain(count);
    expect(error.message).toContain(`at most ${limit}`);
  });
});

describe("the HTTP front's timeouts", () => {
  let server: RunningHttpServer;
  beforeAll(async () => {
    const stub = createStub({ script: defaultScript(), clock: createVirtualClock() });
    server = await startHttpServer({ stub, address: "127.0.0.1:0", log: () => {}, headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 300 });
  });
  afterAll(() => server.close(100));

  // The server closes each socket itself (the test never does), so waiting for its close event
  // says it was cut; how long after its timeout is the machine's business, not a bound here.
  it("cuts 8 connections that trickle their headers (slowloris) once the header timeout passes", async () => {
    const started = performance.now();
    const closedAfter = await Promise.all(
      Array.from({ length: 8 }, () => {
        return new Promise<number>((resolve) => {
          const socket: Socket = connect(server.port, "127.0.0.1");
          socket.on("error", () => {});
          socket.write("GET /v1/models HTTP/1.1\r\nhost: x\r\n");
          // One header byte every 50 ms: never a complete head, always some traffic.
          const drip = setInterval(() => socket.write("x"), 50);
          socket.on("close", () => {
            clearInterval(drip);
            resolve(performance.now() - started);
          });
        });
      }),
    );
    // Not before the header timeout (400 ms): a lower bound, which load cannot break.
    for (const ms of closedAfter) expect(ms).toBeGreaterThanOrEqual(395);
  });

  it("cuts a connection that sends its headers but trickles its body once the request timeout passes", async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(server.port, "127.0.0.1");
      const chunks: Buffer[] = [];
      socket.on("data", (c: Buffer) => chunks.push(c));
      socket.on("error", () => {});
      socket.write("POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n{");
      const drip = setInterval(() => socket.write(" "), 50);
      socket.on("close", () => {
        clearInterval(drip);
        resolve(Buffer.concat(chunks).toString("latin1"));
      });
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes an idle keep-alive connection after the keep-alive timeout", async () => {
    const idleFor = await new Promise<number>((resolve) => {
      const socket = connect(server.port, "127.0.0.1");
      let answeredAt = 0;
      socket.on("error", () => {});
      socket.on("data", () => (answeredAt ||= performance.now()));
      socket.on("close", () => resolve(performance.now() - answeredAt));
      socket.write("GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n");
    });
    // Closed by the server (the test never closes it), not before the keep-alive timeout.
    expect(idleFor).toBeGreaterThanOrEqual(250);
  });
});

describe("the HTTP front with a token", () => {
  let server: RunningHttpServer;
  let base: string;
  beforeAll(async () => {
    const stub = createStub({ script: defaultScript(), clock: createVirtualClock() });
    server = await startHttpServer({ stub, address: "127.0.0.1:0", log: () => {}, token: "s3cret" });
    base = `http://${server.address}`;
  });
  afterAll(() => server.close(100));

  it("answers 401 invalid_api_key without `authorization: Bearer TOKEN`, on every route", async () => {
    for (const [method, path, headers] of [
      ["GET", "/v1/models", {}],
      ["GET", "/v1/models/x", { authorization: "Bearer guess" }],
      ["POST", "/v1/chat/completions", { authorization: "s3cret" }],
      ["GET", "/nowhere", {}],
    ] as const) {
      const r = await rawRequest(base, method, path, method === "POST" ? { messages: [user] } : undefined, headers);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(JSON.parse(String(r.body)).error).toMatchObject({ code: "invalid_api_key" });
    }
  });

  it("serves a request that carries the token", async () => {
    const r = await rawRequest(base, "POST", "/v1/chat/completions", { messages: [user] }, { authorization: "Bearer s3cret" });
    expect(r.status).toBe(200);
  });
});

describe("modelstub serve --http off loopback", () => {
  it("refuses to start on 0.0.0.0 without a control token, as the gRPC side does", async () => {
    const r = await runCli(["serve", "--grpc", "127.0.0.1:0", "--http", "0.0.0.0:0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("refusing to serve HTTP on 0.0.0.0:0 without a token");
  });

  it("with --control-token, requires it as the bearer token of every HTTP request", async () => {
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--http", "0.0.0.0:0", "--control-token", "s3cret"]);
    try {
      const port = await new Promise<string>((resolve) => {
        const look = () => {
          const m = /HTTP listening(?: on |","url":")http:\/\/[^:\s]+:(\d+)/.exec(s.output().stderr);
          if (m) resolve(m[1]!);
          else setTimeout(look, 20);
        };
        look();
      });
      const base = `http://127.0.0.1:${port}`;
      expect((await rawRequest(base, "GET", "/v1/models")).status).toBe(401);
      expect((await rawRequest(base, "GET", "/v1/models", undefined, { authorization: "Bearer s3cret" })).status).toBe(200);
    } finally {
      s.child.kill("SIGTERM");
      await s.exit;
    }
  });
});
