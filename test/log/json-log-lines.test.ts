import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * Issue 31, item 8: with `--log-format json`, every line `modelstub serve` writes on stderr is
 * one JSON object, start-up and listening lines (with address fields), warnings and shutdown
 * included; the text format keeps its lines; nothing is printed twice. A separate process, as a
 * log pipeline reads it.
 */

let dir: string;
let script: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-json-log-"));
  script = join(dir, "hang.yaml");
  await writeFile(script, "entries:\n  - reply: hi\n  - hang: true\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs a server with `format` through a call, a call still hanging at SIGTERM and the grace running out: its stderr and exit code. */
async function serveThroughShutdown(format: "json" | "text"): Promise<{ stderr: string; code: number; grpc: string; http: string }> {
  const server = await startServeProcess([
    "--script",
    script,
    "--grpc",
    "127.0.0.1:0",
    "--http",
    "127.0.0.1:0",
    "--log-format",
    format,
    "--grace",
    "100ms",
    "--clock",
    "virtual",
  ]);
  const port = openGrpcPort(server.address);
  const control = createControlClient(server.address);
  try {
    await port.generate(userRequest("hello"), { session: "logs" });
    const hanging = port.generate(userRequest("wait"), { session: "logs" }).catch(() => undefined);
    // Decided by the server's own account, not by a sleep: the call is running there.
    await expect.poll(async () => (await control.listSessions()).find((s) => s.name === "logs")?.running, { timeout: testTimeoutMs(20_000) }).toBe(1);
    server.child.kill("SIGTERM");
    const code = await server.exit;
    await hanging;
    const stderr = server.output().stderr;
    const http = /HTTP listening(?: on |","url":")([^\s"]+)/.exec(stderr)![1]!;
    return { stderr, code, grpc: server.address, http };
  } finally {
    control.close();
    port.close();
  }
}

describe("modelstub serve's stderr", { timeout: testTimeoutMs(60_000) }, () => {
  it("is one JSON object a line with --log-format json: start-up, listening with address fields, calls, a warning and shutdown", async () => {
    const { stderr, code, grpc, http } = await serveThroughShutdown("json");
    expect(code).toBe(0);
    const lines = stderr.split("\n").filter((l) => l !== "");
    const objects = lines.map((l) => {
      expect(() => JSON.parse(l), l).not.toThrow();
      return JSON.parse(l) as Record<string, unknown>;
    });
    const [host, port] = grpc.split(":");
    const httpAddress = http.replace("http://", "");
    expect(objects.slice(0, 3)).toEqual([
      { level: "info", msg: "serving script", script, entries: 2, clock: "virtual" },
      { level: "info", msg: "gRPC listening", address: grpc, host, port: Number(port), tls: false },
      { level: "info", msg: "HTTP listening", url: http, address: httpAddress, host: "127.0.0.1", port: Number(httpAddress.split(":")[1]) },
    ]);
    const msgs = objects.map((o) => o["msg"]);
    expect(msgs).toContain("call");
    expect(objects).toContainEqual(expect.objectContaining({ level: "warn", msg: "grace period over: cutting off calls in flight" }));
    expect(msgs.slice(-1)).toEqual(["stopped"]);
    expect(msgs.filter((m) => m === "HTTP listening")).toHaveLength(1);
  });

  it("keeps the text format's lines, each printed once", async () => {
    const { stderr, code, grpc, http } = await serveThroughShutdown("text");
    expect(code).toBe(0);
    const lines = stderr.split("\n");
    expect(lines.slice(0, 3)).toEqual([
      `modelstub: serving script ${JSON.stringify(script)} (2 entries, virtual clock)`,
      `modelstub: gRPC listening on ${grpc}`,
      `modelstub: HTTP listening on ${http}`,
    ]);
    expect(lines.filter((l) => l.includes("HTTP listening"))).toHaveLength(1);
    expect(lines).toContain("modelstub warn: grace period over: cutting off calls in flight in_flight=1");
  });

  it("says why it cannot start as one JSON object, and grpc-js prints nothing of its own for a busy port", async () => {
    const first = await startServeProcess(["--grpc", "127.0.0.1:0", "--log-format", "json"]);
    try {
      const second = await runCli(["serve", "--grpc", first.address, "--log-format", "json"]);
      expect(second.code).toBe(2);
      expect(second.stderr).not.toContain("No address added");
      const lines = second.stderr.split("\n").filter((l) => l !== "");
      expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
        {
          level: "error",
          msg: `cannot listen on ${first.address}: the address is in use (is another modelstub running? pick another with --grpc)`,
          exit_code: 2,
        },
      ]);
    } finally {
      first.child.kill("SIGTERM");
      await first.exit;
    }
  });
});
