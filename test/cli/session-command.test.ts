import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

type Server = Awaited<ReturnType<typeof startServeProcess>>;

let dir: string;
let server: Server;
const twoReplies = "entries:\n  - reply: one\n  - reply: two\n";

/** `modelstub session ...` against the test's server. */
const session = (...args: string[]) => runCli(["session", ...args, "--addr", server.address]);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-session-"));
  await writeFile(join(dir, "two.yaml"), twoReplies);
  await writeFile(join(dir, "bad.yaml"), "entries:\n  - repy: hi\n  - reply: 42\n");
  server = await startServeProcess(["--grpc", "127.0.0.1:0", "--record-dir", dir, "--max-message-bytes", "2000"]);
});

afterAll(async () => {
  server.child.kill("SIGTERM");
  await server.exit;
});

// Each test runs the CLI several times, a second or more each on a loaded machine.
describe("modelstub session", { timeout: testTimeoutMs(60_000) }, () => {
  it("loads a script into a session and lists it in a table, and as JSON with --json", async () => {
    const load = await session("load", "listed", join(dir, "two.yaml"));
    expect(load).toEqual({ code: 0, stdout: `session "listed": loaded ${join(dir, "two.yaml")} (2 entries)\n`, stderr: "" });
    const table = await session("list");
    expect(table.code).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^NAME +CALLS +RUNNING +SCRIPT$/);
    expect(table.stdout).toMatch(new RegExp(`\\nlisted +0 +0 +${join(dir, "two.yaml")}\\n`));
    const json = JSON.parse((await session("list", "--json")).stdout) as { sessions: unknown[] };
    expect(json.sessions).toContainEqual({ name: "listed", calls: 0, running: 0, script_name: join(dir, "two.yaml") });
  });

  it("prints exactly what `modelstub validate` prints for an invalid script, exits 1 and sends nothing", async () => {
    const file = join(dir, "bad.yaml");
    const validate = await runCli(["validate", file]);
    const load = await session("load", "never-sent", file);
    expect(load).toEqual({ code: 1, stdout: "", stderr: validate.stderr });
    expect(validate.stderr).toContain("unknown key `repy`");
    expect((await session("list")).stdout).not.toContain("never-sent");
  });

  it("prints the server's message and exits 3 when the server refuses a script that is valid here", async () => {
    // Valid, but past the server's --max-message-bytes 2000.
    const file = join(dir, "big.yaml");
    await writeFile(file, `entries:\n${"  - reply: a reply long enough to fill the message limit soon\n".repeat(60)}`);
    const load = await session("load", "too-big", file);
    expect(load.code).toBe(3);
    expect(load.stderr).toMatch(/^modelstub session load: the server answered RESOURCE_EXHAUSTED: .+/);
  });

  it("sets a fault plan on a session, which its next call meets, and prints what it set", async () => {
    const file = join(dir, "first-call-fails.yaml");
    await writeFile(file, "name: first-call-fails\nrules:\n  - at: { call: 1 }\n    error: { code: UNAVAILABLE, message: planned outage }\n");
    await session("load", "faulty", join(dir, "two.yaml"));
    const set = await session("faults", "faulty", file);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/^session "faulty": fault plan "first-call-fails" set \(1 rule; digest [0-9a-f]{12}\); the episode it closed holds 0 calls\n$/);
    const port = openGrpcPort(server.address);
    const first = await port.generate(userRequest("a"), { session: "faulty" }).catch((e: Error) => e.message);
    const second = await port.generate(userRequest("b"), { session: "faulty" });
    port.close();
    expect([first, second.message?.content]).toEqual(["14: planned outage", "one"]);
    const json = JSON.parse((await session("faults", "faulty", file, "--json")).stdout) as { closed_calls: number; plan: { name: string } };
    expect([json.closed_calls, json.plan.name]).toEqual([2, "first-call-fails"]);
  });

  it("checks a fault plan before sending it: a bad one prints its problems, exits 1 and changes nothing", async () => {
    const file = join(dir, "bad-plan.yaml");
    await writeFile(file, "rules:\n  - at: { cal: 1 }\n    timeout: true\n");
    const set = await session("faults", "never-faulted", file);
    expect(set.code).toBe(1);
    expect(set.stderr).toContain(`${file}:2:`);
    expect(set.stderr).toContain("unknown key `cal`");
    expect((await session("list")).stdout).not.toContain("never-faulted");
  });

  it("prints the server's refusal and exits 3 for a plan naming a step the script lacks", async () => {
    const file = join(dir, "wrong-step.yaml");
    await writeFile(file, "rules: [{ at: { step: plan }, hang: true }]\n");
    const set = await session("faults", "stepless", file);
    expect(set.code).toBe(3);
    expect(set.stderr).toMatch(/^modelstub session faults: the server answered INVALID_ARGUMENT: .*has no step "plan"/);
  });

  it("exits 4 from verify listing the entries a session left unused, and 0 once they are used", async () => {
    await session("load", "checked", join(dir, "two.yaml"));
    const before = await session("verify", "checked");
    expect(before.code).toBe(4);
    expect(before.stdout).toBe(
      'session "checked": not satisfied: 2 scripted entries were not used up\nLEFT  ENTRY\n1     entries[0]: reply "one"\n1     entries[1]: reply "two"\n',
    );
    const port = openGrpcPort(server.address);
    for (const text of ["a", "b"]) await port.generate(userRequest(text), { session: "checked" });
    port.close();
    expect(await session("verify", "checked")).toEqual({ code: 0, stdout: 'session "checked": satisfied (every scripted entry was used)\n', stderr: "" });
    const json = JSON.parse((await session("verify", "checked", "--json")).stdout) as { satisfied: boolean; unused: unknown[] };
    expect(json).toMatchObject({ satisfied: true, unused: [] });
  });

  it("resets and deletes a session, saying how many calls its closed episode held, and exits 3 deleting one the server does not keep", async () => {
    await session("load", "gone", join(dir, "two.yaml"));
    const port = openGrpcPort(server.address);
    await port.generate(userRequest("hi"), { session: "gone" });
    port.close();
    expect((await session("reset", "gone")).stdout).toBe('session "gone": reset (the episode it closed holds 1 call)\n');
    expect((await session("delete", "gone")).stdout).toBe('session "gone": deleted (its episode holds 0 calls)\n');
    const again = await session("delete", "gone");
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('the server answered NOT_FOUND: no session "gone"');
  });

  it("exits 2 when no server answers at the address, and 1 for a wrong number of arguments", async () => {
    const none = await runCli(["session", "list", "--addr", "127.0.0.1:1", "--timeout", "300ms"]);
    expect(none).toEqual({ code: 2, stdout: "", stderr: "modelstub session list: cannot connect to 127.0.0.1:1 within 300 ms\n" });
    const extra = await session("reset", "a", "b");
    expect(extra.code).toBe(1);
    expect(extra.stderr).toContain('modelstub session: reset takes SESSION, not "a" "b"');
  });

  it("sends the control token, and exits 3 with the server's message when it is wrong", async () => {
    const guarded = await startServeProcess(["--grpc", "127.0.0.1:0", "--control-token", "s3cret"]);
    try {
      expect((await runCli(["session", "list", "--addr", guarded.address, "--control-token", "s3cret"])).code).toBe(0);
      const wrong = await runCli(["session", "list", "--addr", guarded.address], { env: { MODELSTUB_CONTROL_TOKEN: "nope" } });
      expect(wrong).toEqual({ code: 3, stdout: "", stderr: "modelstub session list: the server answered UNAUTHENTICATED: wrong control token\n" });
    } finally {
      guarded.child.kill("SIGTERM");
      await guarded.exit;
    }
  });
});

/** A self-signed certificate for localhost and 127.0.0.1, and its key. */
async function selfSigned(): Promise<{ cert: string; key: string }> {
  const cert = join(dir, "tls.cert.pem");
  const key = join(dir, "tls.key.pem");
  const args = [
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
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
  ];
  await new Promise<void>((resolve, reject) => execFile("openssl", args, (e) => (e ? reject(e) : resolve())));
  return { cert, key };
}

describe("modelstub session and modelstub episode over TLS", { timeout: testTimeoutMs(60_000) }, () => {
  it("reach a TLS server with --tls and --tls-ca, as health does", async () => {
    const { cert, key } = await selfSigned();
    const tls = await startServeProcess(["--grpc", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key]);
    try {
      const list = await runCli(["session", "list", "--addr", tls.address, "--tls", "--tls-ca", cert]);
      expect(list).toEqual({ code: 0, stdout: "no sessions\n", stderr: "" });
      // No call used "default": its empty episode, asked for as such.
      const episode = await runCli(["episode", "--allow-missing", "--addr", tls.address, "--tls", "--tls-ca", cert]);
      expect(episode.code).toBe(0);
      expect(JSON.parse(episode.stdout)).toMatchObject({ session: "default" });
      // Plaintext to a TLS server never connects: the TLS options are what made the difference.
      expect((await runCli(["session", "list", "--addr", tls.address, "--timeout", "500ms"])).code).toBe(2);
    } finally {
      tls.child.kill("SIGTERM");
      await tls.exit;
    }
  });
});
