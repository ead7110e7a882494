import { spawn } from "node:child_process";

/** How one start of COMMAND ended. */
export interface CommandExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The last bytes COMMAND wrote to stdout and stderr (at most tailBytes), for the report. */
  output: string;
  /** True when the runner ended it at --timeout. */
  timedOut: boolean;
}

/** A started COMMAND: its exit, and a way to SIGKILL its whole process group. */
export interface StartedCommand {
  readonly exited: Promise<CommandExit>;
  /** SIGKILLs COMMAND's process group (COMMAND and every process it started). */
  kill(): void;
}

/** The output a report keeps of a run: its last 8 KiB. */
const tailBytes = 8 * 1024;

/**
 * Starts COMMAND in a process group of its own (detached), so a crash kills it and every child
 * it started at once, as a machine losing power would. stdin is closed; stdout and stderr are
 * kept (their tail) for the report. `timeoutMs` SIGKILLs it when it runs longer.
 */
export function startCommand(command: readonly string[], env: NodeJS.ProcessEnv, cwd: string | undefined, timeoutMs: number): StartedCommand {
  const child = spawn(command[0]!, command.slice(1), { env, cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let tail = "";
  const keep = (b: Buffer) => {
    tail = (tail + b.toString("utf8")).slice(-tailBytes);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let timedOut = false;
  const kill = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone: nothing to kill.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, timeoutMs);
  const exited = new Promise<CommandExit>((resolve) => {
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ exitCode: null, signal: null, output: `cannot start ${command[0]}: ${err.message}`, timedOut: false });
    });
    // 'close', not 'exit': the output is all read by then.
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, output: tail, timedOut });
    });
  });
  return { exited, kill };
}
