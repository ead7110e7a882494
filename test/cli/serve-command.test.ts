import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-cli-"));
});

describe("modelstub serve", () => {
  it("serves the built-in default script with no --script, printing where it listens and what it loaded on stderr, leaving stdout empty", async () => {
    // The text format's lines; test/log/json-log-lines.test.ts reads the JSON format's.
    const { child, address, output, exit } = await startServeProcess(["--grpc", "127.0.0.1:0", "--log-format", "text"]);
    try {
      expect(output().stderr).toContain('serving script "default" (9 entries, real clock)');
      expect(output().stderr).toContain(`modelstub: gRPC listening on ${address}\n`);
      expect(output().stdout).toBe("");
      const port = openGrpcPort(address);
      const res = await port.generate(userRequest("PROBE-ECHO hello"));
      expect(res.message?.content).toBe("PROBE-ECHO ok: PROBE-ECHO hello");
      port.close();
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exit).toBe(0);
  });

  it("exits 2 naming the file and the field for a script with a wrong type", async () => {
    const file = join(dir, "wrong-type.yaml");
    await writeFile(file, "entries:\n  - reply: 42\n");
    const r = await runCli(["serve", "--script", file, "--grpc", "127.0.0.1:0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:2:12: entries[0].reply:`);
  });

  it("exits 2 for an unknown key, an empty file and invalid YAML, printing the whole problem line", async () => {
    // [file, its text, the line after "cannot load script FILE"]
    const cases: [string, string, string][] = [
      ["unknown-key.yaml", "entries:\n  - repy: hi\n", ":2:5: entries[0]: unknown key `repy` (hint: did you mean `reply`?)"],
      ["empty.yaml", "", ":1:1: the script is empty (hint: a script is a mapping with `entries:` (a list of replies) or `steps:`)"],
      ["invalid.yaml", "entries: [\n", ":1:10: entries: invalid YAML: the [ list opened here is not closed (hint: add ] after its last item)"],
      ["missing.yaml", "", ": cannot read the file: no such file (hint: check the path; a relative path starts from the current directory)"],
    ];
    for (const [name, text, line] of cases) {
      const file = join(dir, name);
      if (name !== "missing.yaml") await writeFile(file, text);
      const r = await runCli(["serve", "--script", file, "--grpc", "127.0.0.1:0"]);
      expect(r.code, name).toBe(2);
      expect(r.stderr.split("\n"), name).toContain(`modelstub serve: cannot load script ${file}${line}`);
    }
  });

  it("says `1 entry`, not `1 entries`, when it serves a one-entry script", async () => {
    const file = join(dir, "one-entry.yaml");
    await writeFile(file, "entries:\n  - reply: hi\n");
    const { child, output, exit } = await startServeProcess(["--script", file, "--grpc", "127.0.0.1:0", "--log-format", "text"]);
    try {
      expect(output().stderr).toContain(`serving script ${JSON.stringify(file)} (1 entry, real clock)`);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exit).toBe(0);
  });

  it("shuts down gracefully on a SIGTERM sent the moment it says it listens", async () => {
    // The signal handlers are in place before the "listening" line, so there is no window in
    // which SIGTERM gets Node's default kill (exit 143) instead of a graceful exit 0.
    for (let i = 0; i < 3; i++) {
      const { child, exit } = await startServeProcess(["--grpc", "127.0.0.1:0"]);
      child.kill("SIGTERM");
      expect(await exit).toBe(0);
    }
  });

  it("exits 2 for a --grace longer than a timer can wait, instead of cutting calls off at once", async () => {
    const r = await runCli(["serve", "--grpc", "127.0.0.1:0", "--grace", "36000m"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--grace must be at most 24 days (34560m), not "36000m"');
  });

  it("exits 2 with a clear message when the port is busy", async () => {
    const first = await startServeProcess(["--grpc", "127.0.0.1:0"]);
    try {
      const r = await runCli(["serve", "--grpc", first.address]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`cannot listen on ${first.address}: the address is in use`);
    } finally {
      first.child.kill("SIGTERM");
      await first.exit;
    }
  });
});
