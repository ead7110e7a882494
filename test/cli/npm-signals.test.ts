import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { cliPath, repoRoot } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * A CI script starts the stub with `npm start &` or `npx modelstub serve &` and stops it with
 * `kill $!`: the signal reaches npm, not the server. npm passes it to the `sh -c` it runs the
 * command in, and dash dies without passing it on. These tests run the real npm and check that
 * no server is left behind and that every episode is written all the same.
 */

/** Starts `npm ARGS` in `cwd`; resolves once the server it runs says where it listens. */
function startUnderNpm(args: string[], cwd: string): Promise<{ npm: ChildProcess; address: string; exit: Promise<number | string> }> {
  return new Promise((resolve, reject) => {
    const npm = spawn("npm", args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });
    let out = "";
    const exit = new Promise<number | string>((r) => npm.on("exit", (code, signal) => r(code ?? signal ?? -1)));
    // The server's listening line is on stderr; npm's own lines are on stdout: both are read.
    const take = (d: Buffer) => {
      out += d.toString();
      const m = /gRPC listening(?: on |","address":")([^\s"]+)/.exec(out);
      if (m) resolve({ npm, address: m[1]!, exit });
    };
    npm.stdout!.on("data", take);
    npm.stderr!.on("data", take);
    void exit.then((code) => reject(new Error(`npm ${args.join(" ")} exited with ${code} before the server listened:\n${out}`)));
  });
}

/** Processes a test started, killed after it if a failed assertion left them running. */
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
});

/** Every process below `pid` (npm's shell and the node server), from `ps`. */
function descendants(pid: number): number[] {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length > 0; ) {
    frontier = rows.filter(([, ppid]) => frontier.includes(ppid)).map(([p]) => p);
    found.push(...frontier);
  }
  started.push(pid, ...found);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until `ok`; the test's own timeout bounds it, with `what` in the failure message. */
async function waitFor(what: string, ok: () => boolean): Promise<void> {
  await expect.poll(ok, { message: `waiting until ${what}` }).toBe(true);
}

/** One recorded call in session `ci`, so the server has an episode to write at shutdown. */
async function oneCall(address: string): Promise<void> {
  const port = openGrpcPort(address);
  await port.generate(userRequest("PROBE-ECHO hi"), { session: "ci" });
  port.close();
}

/** A project with modelstub installed as a dependency would be: its bin in node_modules/.bin. */
async function projectWithModelstub(): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), "modelstub-npx-"));
  await writeFile(join(project, "package.json"), '{ "name": "npx-user", "version": "1.0.0", "private": true }\n');
  await mkdir(join(project, "node_modules", ".bin"), { recursive: true });
  await symlink(cliPath, join(project, "node_modules", ".bin", "modelstub"));
  return project;
}

describe("a server started through npm", { timeout: testTimeoutMs(60_000) }, () => {
  it("npm start: SIGTERM to npm drains the server, and npm exits 0 only after the episodes are written", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-npm-start-"));
    const { npm, address, exit } = await startUnderNpm(["start", "--", "--record-dir", dir, "--grpc", "127.0.0.1:0"], repoRoot);
    await oneCall(address);
    const below = descendants(npm.pid!);
    npm.kill("SIGTERM");
    expect(await exit).toBe(0);
    // Already there when npm has exited: `kill $!; wait $!` is enough before reading them.
    expect(existsSync(join(dir, "ci.episode.binpb"))).toBe(true);
    expect(below.filter(alive)).toEqual([]);
  });

  it("npx modelstub serve: SIGTERM to npx ends the server, which notices its parent is gone and writes its episodes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-npx-rec-"));
    const { npm, address, exit } = await startUnderNpm(
      ["exec", "--no", "--", "modelstub", "serve", "--record-dir", dir, "--grpc", "127.0.0.1:0"],
      await projectWithModelstub(),
    );
    await oneCall(address);
    const below = descendants(npm.pid!);
    expect(below.length).toBeGreaterThan(0);
    npm.kill("SIGTERM");
    await exit;
    await waitFor("the episode is written", () => existsSync(join(dir, "ci.episode.binpb")));
    await waitFor("no process npx started is left", () => below.filter(alive).length === 0);
  });

  it("npm start: even SIGKILL to npm, which cannot pass anything on, leaves no server behind and loses no episode", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-npm-kill-"));
    const { npm, address, exit } = await startUnderNpm(["start", "--", "--record-dir", dir, "--grpc", "127.0.0.1:0"], repoRoot);
    await oneCall(address);
    const below = descendants(npm.pid!);
    npm.kill("SIGKILL");
    await exit;
    await waitFor("the episode is written", () => existsSync(join(dir, "ci.episode.binpb")));
    await waitFor("no process npm started is left", () => below.filter(alive).length === 0);
  });
});
