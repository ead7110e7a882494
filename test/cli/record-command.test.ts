import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { loadScriptText } from "../../src/script/load-script.js";
import { startPythonUpstream } from "../upstream-recorder/upstreams/python-upstream.js";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-openai-upstream.js";
import { cliPath, repoRoot, runCli } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/** Starts `modelstub record ARGS`; resolves once its HTTP front listens. */
function startRecord(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ url: string; stop: () => Promise<{ code: number; stdout: string; stderr: string }> }>((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, "record", ...args], { env: { ...process.env, ...env }, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const exit = new Promise<number>((r) => child.on("exit", (code, signal) => r(code ?? (signal ? 128 : 1))));
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /HTTP listening on (\S+)/.exec(stderr);
      if (m) resolve({ url: `${m[1]}/v1`, stop: async () => (child.kill("SIGTERM"), { code: await exit, stdout, stderr }) });
    });
    void exit.then((code) => reject(new Error(`modelstub record exited with ${code} before listening:\n${stderr}`)));
  });
}

describe("modelstub record", { timeout: testTimeoutMs(60_000) }, () => {
  let upstream: FakeUpstream | undefined;
  afterEach(async () => upstream?.close());

  it("records through its HTTP front, writes the script at SIGTERM, prints the replay command, and never the key", async () => {
    upstream = await startFakeUpstream([
      { kind: "json", message: { content: "Hello from upstream." }, finish: "stop", usage: { prompt_tokens: 3, completion_tokens: 4 } },
      { kind: "error", status: 429, message: "slow down", headers: { "retry-after": "2" } },
    ]);
    const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "recorded.yaml");
    const rec = await startRecord(
      ["--upstream", upstream.baseUrl, "--out", out, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--upstream-key-env", "REC_TEST_KEY"],
      { REC_TEST_KEY: "sk-cli-SECRET" },
    );
    const client = new OpenAI({ baseURL: rec.url, apiKey: "x", maxRetries: 0 });
    const first = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(first.choices[0]!.message.content).toBe("Hello from upstream.");
    await expect(client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "again" }] })).rejects.toMatchObject({ status: 429 });
    const { code, stdout, stderr } = await rec.stop();
    expect(code).toBe(0);
    expect(stdout).toBe(`modelstub serve --script ${out} --grpc 127.0.0.1:0 --http 127.0.0.1:0\n`);
    expect(stderr).toContain(`modelstub record: wrote ${out}: 2 calls of session "default"`);
    expect(upstream.received[0]!.headers["authorization"]).toBe("Bearer sk-cli-SECRET");
    const script = await readFile(out, "utf8");
    expect(loadScriptText(script, out).entryCount).toBe(2);
    expect(`${script}${stdout}${stderr}`).not.toContain("sk-cli-SECRET");
    expect((await runCli(["validate", out])).code).toBe(0);
  });

  it("prints a replay command with the recorder's --grpc, --http, --clock virtual for --latency, and a path quoted for the shell", async () => {
    upstream = await startFakeUpstream([{ kind: "json", message: { content: "Hi." }, finish: "stop" }]);
    const dir = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "it's a $dir");
    await mkdir(dir);
    const out = join(dir, "rec.yaml");
    const rec = await startRecord(["--upstream", upstream.baseUrl, "--out", out, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--latency"], {});
    await new OpenAI({ baseURL: rec.url, apiKey: "x", maxRetries: 0 }).chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    const { code, stdout } = await rec.stop();
    expect(code).toBe(0);
    const quoted = `'${out.replaceAll("'", `'\\''`)}'`;
    expect(stdout).toBe(`modelstub serve --script ${quoted} --clock virtual --grpc 127.0.0.1:0 --http 127.0.0.1:0\n`);
    // A POSIX shell reads the words back as they were meant.
    const words = execFileSync("sh", ["-c", `set -- ${stdout.trim()}; printf '%s\\n' "$@"`], { encoding: "utf8" });
    expect(words.split("\n").slice(0, 4)).toEqual(["modelstub", "serve", "--script", out]);
  });

  it("says a busy --grpc or --http port as serve says it, naming the flag, and exits 2 as serve does", async () => {
    const held = createServer();
    await new Promise<void>((r) => held.listen(0, "127.0.0.1", r));
    const busy = `127.0.0.1:${(held.address() as AddressInfo).port}`;
    try {
      const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "x.yaml");
      const lastLine = (text: string, prefix: string) => text.trim().split("\n").at(-1)!.replace(prefix, "");
      for (const flags of [
        ["--grpc", busy],
        ["--grpc", "127.0.0.1:0", "--http", busy],
      ]) {
        const served = await runCli(["serve", ...flags]);
        const recorded = await runCli(["record", "--upstream", "http://127.0.0.1:9/v1", "--out", out, ...flags]);
        expect(recorded.code).toBe(2);
        expect(served.code).toBe(2);
        const flag = flags.at(-2)!;
        expect(lastLine(recorded.stderr, "modelstub record: ")).toBe(
          `cannot listen on ${busy}: the address is in use (${flag === "--grpc" ? "is another modelstub running? " : ""}pick another with ${flag})`,
        );
        expect(lastLine(recorded.stderr, "modelstub record: ")).toBe(lastLine(served.stderr, "modelstub serve: "));
      }
    } finally {
      held.close();
    }
  });

  it("warns as soon as the script passes the 512 KiB limit, and exits 1 at the end without a replay command", async () => {
    // Each under the 64 KiB past which a text goes to a text_file: ten of them pass 512 KiB.
    const words = ["one", "two", "six", "ten", "red", "tan", "big", "low", "far", "new"];
    const long = (word: string) => ({ kind: "json" as const, message: { content: `${word} `.repeat(15_000) }, finish: "stop" });
    upstream = await startFakeUpstream(words.map(long));
    const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "big.yaml");
    const rec = await startRecord(["--upstream", upstream.baseUrl, "--out", out, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0"], {});
    const client = new OpenAI({ baseURL: rec.url, apiKey: "x", maxRetries: 0 });
    for (const q of words) await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: q }] });
    const { code, stdout, stderr } = await rec.stop();
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.match(/over the 524288 \(512 KiB\) a script may hold/g)).toHaveLength(2);
    expect(stderr).toContain(`modelstub record: ${out}: the script is `);
    expect(stderr).toContain(`modelstub record: ${out} cannot be replayed: the script is `);
  });

  it("records a 600 KB reply from a Python upstream as a text_file, exits 0, and validate reads the script and its file", async () => {
    const python = await startPythonUpstream([{ reply_bytes: 600_000 }]);
    try {
      const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "huge.yaml");
      const rec = await startRecord(["--upstream", python.baseUrl, "--out", out, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0"], {});
      const client = new OpenAI({ baseURL: rec.url, apiKey: "x", maxRetries: 0 });
      const answer = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "huge" }] });
      expect(answer.choices[0]!.message.content).toHaveLength(600_000);
      const { code, stdout } = await rec.stop();
      expect(code).toBe(0);
      expect(stdout).toContain(`modelstub serve --script ${out}`);
      expect(await readFile(out, "utf8")).toContain("text_file: huge.replies/call-1.txt");
      // validate compiles in the worker, reading the text_file from the script's folder.
      const checked = await runCli(["validate", out]);
      expect([checked.code, checked.stdout.trim()]).toEqual([0, `${out}: ok (1 entry in 1 list)`]);
    } finally {
      await python.close();
    }
  });

  it("exits 1 when an answer it gave could not be recorded (a 1.2 MB reply), and says which call", async () => {
    const python = await startPythonUpstream([{ reply_bytes: 1_200_000 }]);
    try {
      const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "huge.yaml");
      const rec = await startRecord(["--upstream", python.baseUrl, "--out", out, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0"], {});
      const client = new OpenAI({ baseURL: rec.url, apiKey: "x", maxRetries: 0 });
      const error = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "huge" }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      const { code, stderr } = await rec.stop();
      expect(code).toBe(1);
      expect(stderr).toContain(
        "modelstub record: 1 upstream answer could not be recorded (an INTERNAL error stands in, as the client got it):\n  call 1 (Generate) -> ",
      );
      expect(await readFile(out, "utf8")).toContain(
        '# not recorded: the answer cannot be written as a script entry: cannot read text_file "huge.replies/call-1.txt": the file is 1200000 bytes',
      );
    } finally {
      await python.close();
    }
  });

  it("refuses an --out whose folder is missing with exit 2, naming the flag and the path, before recording anything", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "modelstub-record-")), "gone", "x.yaml");
    const run = await runCli(["record", "--upstream", "http://127.0.0.1:9/v1", "--out", out, "--grpc", "127.0.0.1:0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`modelstub record: --out ${out} cannot be written: its folder ${join(out, "..")} does not exist`);
  });

  it("refuses a missing upstream, an unset key variable and a non-loopback address with exit 2", async () => {
    expect((await runCli(["record", "--out", "x.yaml"])).code).toBe(2);
    const unset = await runCli(["record", "--upstream", "http://127.0.0.1:9/v1", "--out", "x.yaml", "--upstream-key-env", "REC_TEST_UNSET"]);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain("REC_TEST_UNSET is not set");
    expect((await runCli(["record", "--upstream", "http://127.0.0.1:9/v1", "--out", "x.yaml", "--grpc", "0.0.0.0:0"])).code).toBe(2);
    expect((await runCli(["record", "--upstream", "ftp://x", "--out", "x.yaml"])).code).toBe(2);
  });
});
