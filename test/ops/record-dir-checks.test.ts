import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "../../src/index.js";
import { createControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";

// Tests run as root here, where mode bits stop no write: unwritable record directories are made
// of paths that are files, or lie under one, or of a directory no one can create files in.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-start-checks-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const serve = (...args: string[]) => runCli(["serve", "--grpc", "127.0.0.1:0", ...args]);

describe("modelstub serve --record-dir, at start", () => {
  it("refuses to start when the record dir is a regular file, naming it, with exit 2", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "not a directory\n");
    const r = await serve("--record-dir", file);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).not.toContain("listening");
    expect(r.stderr).toContain(`modelstub serve: --record-dir ${file}: it is a file, not a directory; give a directory modelstub can write in`);
  });

  it("refuses to start when the record dir cannot be created under a file", async () => {
    const file = join(dir, "a-parent-file");
    await writeFile(file, "");
    const r = await serve("--record-dir", join(file, "episodes"));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--record-dir ${join(file, "episodes")}: cannot create it (ENOTDIR`);
  });

  it.runIf(process.platform === "linux")("refuses to start when no file can be written in the record dir", async () => {
    // A directory where even root cannot create a file.
    const r = await serve("--record-dir", "/proc/self");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--record-dir /proc/self: cannot write in it (");
  });

  it("creates a missing record dir and starts", async () => {
    const records = join(dir, "created", "episodes");
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--record-dir", records]);
    s.child.kill("SIGTERM");
    expect(await s.exit).toBe(0);
    expect(await readdir(records)).toEqual([]);
  });

  it("removes stale temp files of its own writes, and only those, and logs how many", async () => {
    const records = join(dir, "stale");
    await mkdir(records);
    // A pid above pid_max never runs: its temp files are stale. The test runner's own pid runs:
    // its temp files could be another server's writes in flight.
    const gone = Number(await readFile("/proc/sys/kernel/pid_max", "utf8").catch(() => "4194304")) + 1;
    const stale = [`alice.episode.binpb.tmp-${gone}-1`, `alice.episode.json.tmp-${gone}-2`];
    const kept = ["alice.episode.binpb", `alice.episode.binpb.tmp-${process.pid}-7`, `notes.txt.tmp-${gone}-1`, `alice.episode.binpb.tmp-x-1`];
    for (const name of [...stale, ...kept]) await writeFile(join(records, name), "x");

    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--record-dir", records, "--log-format", "json"]);
    s.child.kill("SIGTERM");
    expect(await s.exit).toBe(0);

    expect((await readdir(records)).sort()).toEqual([...kept].sort());
    const line = s
      .output()
      .stderr.split("\n")
      .find((l) => l.includes("stale temp files"));
    expect(JSON.parse(line!)).toMatchObject({ level: "info", msg: "stale temp files in --record-dir", dir: records, removed: 2, kept_for_running_process: 1 });
  });
});

describe("modelstub serve --record-dir, when a write fails at run time", () => {
  it("logs and counts it, answers the reset INTERNAL, and exits 1 at shutdown", async () => {
    const records = join(dir, "taken-away");
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--clock", "virtual", "--record-dir", records, "--log-format", "json"]);
    const port = openGrpcPort(s.address);
    const control = createControlClient(s.address);
    try {
      await port.generate(userRequest("PROBE-ECHO one"), { session: "reset-me" });
      await port.generate(userRequest("PROBE-ECHO two"), { session: "at-shutdown" });
      // The directory is replaced by a file: every write from now on fails.
      await rm(records, { recursive: true });
      await writeFile(records, "");

      await expect(control.call("ResetSession", { session: "reset-me" })).rejects.toMatchObject({
        code: Code.INTERNAL,
        details: expect.stringContaining('the closed episode of session "reset-me" could not be written to --record-dir'),
      });
    } finally {
      port.close();
      control.close();
      s.child.kill("SIGTERM");
    }
    expect(await s.exit).toBe(1);
    const { stderr } = s.output();
    expect(stderr.match(/"msg":"cannot record episode"/g)).toHaveLength(2);
    // --log-format json: the exit's reason is a JSON object like every other line.
    expect(stderr).toContain(
      `${JSON.stringify({ level: "error", msg: `2 episode writes to --record-dir ${records} failed (see the "cannot record episode" lines): those episodes are lost; exiting 1`, failed_writes: 2, exit_code: 1 })}\n`,
    );
  });
});

/** A self-signed certificate and its key, made by openssl. */
async function selfSigned(name: string): Promise<{ cert: string; key: string }> {
  const key = join(dir, `${name}.key.pem`);
  const cert = join(dir, `${name}.cert.pem`);
  await new Promise<void>((resolve, reject) =>
    execFile("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", `/CN=${name}`], (e) =>
      e ? reject(e) : resolve(),
    ),
  );
  return { cert, key };
}

describe("modelstub serve --tls-cert and --tls-key, at start", () => {
  let good: { cert: string; key: string };
  let garbage: string;
  beforeAll(async () => {
    good = await selfSigned("good");
    garbage = join(dir, "garbage.pem");
    await writeFile(garbage, "this is not PEM at all\n");
  });

  it("names a certificate file that holds no certificate", async () => {
    const r = await serve("--tls-cert", garbage, "--tls-key", good.key);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`modelstub serve: --tls-cert ${garbage}: not a PEM certificate (no -----BEGIN CERTIFICATE----- line)`);
  });

  it("names a key file that holds no private key", async () => {
    const r = await serve("--tls-cert", good.cert, "--tls-key", garbage);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`modelstub serve: --tls-key ${garbage}: not a PEM private key (no -----BEGIN PRIVATE KEY----- line)`);
  });

  it("says what OpenSSL found wrong in a PEM block that does not decode", async () => {
    const broken = join(dir, "broken.key.pem");
    await writeFile(broken, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
    const r = await serve("--tls-cert", good.cert, "--tls-key", broken);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`--tls-key ${broken}: not a PEM private key \\(\\w+ routines::`));
  });

  it("suspects swapped files when the certificate file holds a key", async () => {
    const r = await serve("--tls-cert", good.key, "--tls-key", good.cert);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--tls-cert ${good.key}: not a PEM certificate (it holds a private key: are --tls-cert and --tls-key swapped?)`);
  });

  it("refuses a key that belongs to another certificate", async () => {
    const other = await selfSigned("other");
    const r = await serve("--tls-cert", good.cert, "--tls-key", other.key);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--tls-key ${other.key}: not the private key of --tls-cert ${good.cert}`);
  });

  it("names a file that cannot be read", async () => {
    const missing = join(dir, "missing.pem");
    const r = await serve("--tls-cert", good.cert, "--tls-key", missing);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--tls-key ${missing}: cannot read it (ENOENT`);
  });
});
