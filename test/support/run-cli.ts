import { execFile, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { testTimeoutMs } from "./test-timeout.js";

/** The built CLI (npm test builds dist/ first, in pretest). */
export const cliPath = fileURLToPath(new URL("../../bin/modelstub.js", import.meta.url));
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** Runs the CLI to completion in a separate process. */
export function runCli(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliPath, ...args],
      { env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? testTimeoutMs(15_000), cwd: opts.cwd ?? repoRoot },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Starts `modelstub serve` in a child process; resolves with its gRPC address once it listens. */
export function startServeProcess(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ child: ChildProcess; address: string; output: () => { stdout: string; stderr: string }; exit: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, "serve", ...args], {
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd ?? repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const exit = new Promise<number>((r) => child.on("exit", (code, signal) => r(code ?? (signal ? 128 : 1))));
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    // The start-up and listening lines are on stderr, with the log.
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /gRPC listening(?: on |","address":")([^\s"]+)/.exec(stderr);
      if (m) resolve({ child, address: m[1]!, output: () => ({ stdout, stderr }), exit });
    });
    void exit.then((code) => reject(new Error(`modelstub serve exited with ${code} before listening:\n${stdout}\n${stderr}`)));
  });
}
