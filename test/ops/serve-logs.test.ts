import { spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Code } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { collect, userRequest } from "../support/requests.js";
import { cliPath, repoRoot, startServeProcess } from "../support/run-cli.js";
import { callLines, dir, untilDraining, untilRunning, useScratchDir, withServe } from "./serve-process-fixture.js";

useScratchDir();

describe("logs", () => {
  it("write one JSON line per call with session, method, step, entry and its name, model, what the user said, outcome, code, declared latency and an error's message", async () => {
    const script = join(dir, "logged.yaml");
    await writeFile(script, "steps:\n  plan:\n    - name: greet\n      latency: 20ms\n      reply: hi\n    - error: { code: UNAVAILABLE, message: busy }\n");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0"]);
    const port = openGrpcPort(s.address);
    try {
      await port.generate(userRequest("please\nplan   the trip to the coast, then book the cheapest train and a hotel near the station"), {
        session: "logs",
        step: "plan",
      });
      await port.generate(userRequest("x"), { session: "logs", step: "plan" }).catch(() => undefined);
      // The list is spent: the line says why, as the status does.
      await port.generate(userRequest("x"), { session: "logs", step: "plan" }).catch(() => undefined);
    } finally {
      port.close();
      s.child.kill("SIGTERM");
      await s.exit;
    }
    const calls = s
      .output()
      .stderr.trim()
      .split("\n")
      // With `auto`, the start-up lines ("modelstub: gRPC listening on ...") stay plain text.
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l["msg"] === "call");
    expect(calls).toEqual([
      // The user's words on one line, cut at 60 characters.
      {
        level: "info",
        msg: "call",
        transport: "grpc",
        method: "Generate",
        session: "logs",
        step: "plan",
        entry: "steps.plan[0]",
        entry_name: "greet",
        sequence: 1,
        model: "test-model",
        last_user: "please plan the trip to the coast, then book the cheapest tr…",
        outcome: "OK",
        code: "OK",
        declared_ms: 20,
      },
      {
        level: "info",
        msg: "call",
        transport: "grpc",
        method: "Generate",
        session: "logs",
        step: "plan",
        entry: "steps.plan[1]",
        sequence: 2,
        model: "test-model",
        last_user: "x",
        outcome: "ERROR",
        code: "UNAVAILABLE",
        declared_ms: 0,
        message: "busy",
      },
      {
        level: "info",
        msg: "call",
        transport: "grpc",
        method: "Generate",
        session: "logs",
        step: "plan",
        entry: "",
        sequence: 3,
        model: "test-model",
        last_user: "x",
        outcome: "ERROR",
        code: "FAILED_PRECONDITION",
        declared_ms: 0,
        message: "steps.plan ran out: it served its 2 entries (2 calls); add entries, or set on_exhausted: repeat-last or cycle on this list",
      },
    ]);
  });

  it("are silent per call with --quiet, and readable text with --log-format text", async () => {
    for (const [flags, check] of [
      [["--quiet"], (err: string) => expect(err).not.toContain("call")],
      [
        ["--log-format", "text"],
        (err: string) =>
          expect(err).toContain(
            'modelstub info: call transport=grpc method=Generate session=default entry=entries[4] entry_name=probe-echo sequence=1 model=test-model last_user="PROBE-ECHO x"',
          ),
      ],
    ] as const) {
      const s = await startServeProcess(["--grpc", "127.0.0.1:0", ...flags]);
      const port = openGrpcPort(s.address);
      await port.generate(userRequest("PROBE-ECHO x"));
      port.close();
      s.child.kill("SIGTERM");
      await s.exit;
      check(s.output().stderr);
    }
  });

  it("write one line for each refused call too: episode cap, session cap, bad session name and drain", async () => {
    const script = join(dir, "refused.yaml");
    await writeFile(script, "steps:\n  fast: [ { reply: ok, repeat: true } ]\n  slow: [ { latency: 800ms, reply: slow, repeat: true } ]\n");
    const stderr = await withServe(
      ["--script", script, "--grpc", "127.0.0.1:0", "--max-sessions", "2", "--max-episode-calls", "1", "--grace", "5s"],
      {},
      async (s) => {
        const port = openGrpcPort(s.address);
        const code = (p: Promise<unknown>) =>
          p.then(
            () => Code.OK,
            (e: { code: number }) => e.code,
          );
        try {
          await port.generate(userRequest("x"), { session: "a", step: "fast" });
          expect(await code(port.generate(userRequest("x"), { session: "a", step: "fast" }))).toBe(Code.RESOURCE_EXHAUSTED);
          const slow = port.generate(userRequest("x"), { session: "b", step: "slow" });
          await untilRunning(s.address, "b", 1);
          expect(await code(port.generate(userRequest("x"), { session: "c", step: "fast" }))).toBe(Code.RESOURCE_EXHAUSTED);
          expect((await collect(port.generateStream(userRequest("x"), { session: "bad name!", step: "fast" }))).error).toMatchObject({
            code: Code.INVALID_ARGUMENT,
          });
          s.child.kill("SIGTERM");
          await untilDraining(s.address);
          expect(await code(port.generate(userRequest("x"), { session: "late", step: "fast" }))).toBe(Code.UNAVAILABLE);
          expect((await slow).message?.content).toBe("slow");
        } finally {
          port.close();
        }
      },
    );
    const refused = (method: string, session: string, code: string, message: string) => ({
      level: "info",
      msg: "call",
      transport: "grpc",
      method,
      session,
      step: "fast",
      entry: "",
      outcome: "REFUSED",
      code,
      declared_ms: 0,
      message: expect.stringContaining(message),
    });
    const lines = callLines(stderr);
    expect(lines.filter((l) => l["outcome"] === "REFUSED")).toEqual([
      refused("Generate", "a", "RESOURCE_EXHAUSTED", "has recorded 1 call (--max-episode-calls)"),
      refused("Generate", "c", "RESOURCE_EXHAUSTED", "session limit reached"),
      refused("GenerateStream", "bad name!", "INVALID_ARGUMENT", "invalid session name"),
      refused("Generate", "late", "UNAVAILABLE", "shutting down"),
    ]);
    expect(lines.filter((l) => l["outcome"] !== "REFUSED").map((l) => [l["session"], l["outcome"]])).toEqual([
      ["a", "OK"],
      ["b", "OK"],
    ]);
  });

  it("add the resolved configuration and the script loaded at --log-level debug, never the control token", async () => {
    const stderr = await withServe(
      ["--grpc", "127.0.0.1:0", "--log-level", "debug"],
      { MODELSTUB_CONTROL_TOKEN: "s3cret-token", MODELSTUB_CLOCK: "virtual" },
      async () => {},
    );
    expect(stderr).not.toContain("s3cret-token");
    const lines = stderr
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l["msg"] === "configuration")).toMatchObject({
      level: "debug",
      grpc: "127.0.0.1:0",
      clock: "virtual",
      "control-token": "(set)",
      "max-episode-calls": "100000",
      from_flags: ["grpc", "log-level"],
      from_env: ["MODELSTUB_CLOCK", "MODELSTUB_CONTROL_TOKEN"],
    });
    expect(lines.find((l) => l["msg"] === "script loaded")).toEqual({
      level: "debug",
      msg: "script loaded",
      script: "default",
      file: "(built-in default)",
      entries: 9,
    });
  });

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)(
    `are readable text on a terminal without --log-format${hasScript ? "" : " (skipped: script(1) from util-linux, which runs a command under a terminal, is not installed)"}`,
    async () => {
      // script(1) gives serve a terminal for stdout and stderr; both come back on its stdout.
      const command = [process.execPath, cliPath, "serve", "--grpc", "127.0.0.1:0"].map((a) => `'${a}'`).join(" ");
      const child = spawn("script", ["-qfc", command, "/dev/null"], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      const exited = new Promise((r) => child.on("exit", r));
      try {
        await expect.poll(() => /gRPC listening(?: on |","address":")([^\s"]+)/.exec(out)?.[1]).toBeDefined();
        const port = openGrpcPort(/gRPC listening(?: on |","address":")([^\s"]+)/.exec(out)![1]!);
        await port.generate(userRequest("PROBE-ECHO tty"));
        port.close();
        await expect
          .poll(() => out)
          .toContain(
            'modelstub info: call transport=grpc method=Generate session=default entry=entries[4] entry_name=probe-echo sequence=1 model=test-model last_user="PROBE-ECHO tty"',
          );
        expect(out).not.toContain('{"level"');
      } finally {
        child.kill("SIGTERM");
        await exited;
      }
    },
  );
});
