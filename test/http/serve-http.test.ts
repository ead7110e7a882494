import { spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { cliPath, repoRoot, runCli } from "../support/run-cli.js";
import { rawRequest } from "./http-stub.js";

/** Starts `modelstub serve` and waits until both servers listen. */
function serveWithHttp(args: string[]) {
  const child = spawn(process.execPath, [cliPath, "serve", ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const exit = new Promise<number>((r) => child.on("exit", (code, signal) => r(code ?? (signal ? 128 : 1))));
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  const ready = new Promise<{ grpc: string; http: string }>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const grpc = /gRPC listening(?: on |","address":")([^\s"]+)/.exec(stderr)?.[1];
      const http = /HTTP listening(?: on |","url":")([^\s"]+)/.exec(stderr)?.[1];
      if (grpc && http) resolve({ grpc, http });
    });
    void exit.then((code) => reject(new Error(`serve exited with ${code}:\n${stdout}\n${stderr}`)));
  });
  return { child, ready, exit, stderr: () => stderr };
}

describe("modelstub serve --http", () => {
  it("serves one engine over both transports: one session's episode records the HTTP and the gRPC call", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-http-"));
    const s = serveWithHttp(["--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--record-dir", dir]);
    try {
      const { grpc, http } = await s.ready;
      expect(http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await rawRequest(
        http,
        "POST",
        "/v1/chat/completions",
        { model: "m", messages: [{ role: "user", content: "PROBE-ECHO over http" }] },
        { "x-modelstub-session": "both" },
      );
      expect(JSON.parse(String(r.body)).choices[0].message.content).toBe("PROBE-ECHO ok: PROBE-ECHO over http");
      const port = openGrpcPort(grpc);
      await port.generate(userRequest("PROBE-ECHO over grpc"), { session: "both" });
      port.close();
    } finally {
      s.child.kill("SIGTERM");
    }
    expect(await s.exit).toBe(0);
    // One log line per request on either transport, in the server's JSON log format.
    // JSON log lines; the start-up lines ("modelstub: HTTP listening on ...") are plain text.
    const calls = s
      .stderr()
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "call");
    expect(calls.map((c) => [c.transport, c.method, c.status, c.session, c.entry, c.outcome])).toEqual([
      ["http", "POST /v1/chat/completions", 200, "both", "entries[4]", "OK"],
      ["grpc", "Generate", undefined, "both", "entries[4]", "OK"],
    ]);
    const episode = JSON.parse(await readFile(join(dir, "both.episode.json"), "utf8"));
    expect(episode.calls.map((c: { entry: string; response: { id: string } }) => [c.entry, c.response.id])).toEqual([
      ["entries[4]", "gen-both-1"],
      ["entries[4]", "gen-both-2"],
    ]);
  });

  it("documents --http in --help and exits 2 on a bad address", async () => {
    const help = await runCli(["serve", "--help"]);
    expect(help.stdout).toContain("--http HOST:PORT");
    expect(help.stdout).toContain("env MODELSTUB_HTTP");
    const bad = await runCli(["serve", "--grpc", "127.0.0.1:0", "--http", "nowhere"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('cannot listen on nowhere: invalid address "nowhere": expected HOST:PORT');
  });
});
