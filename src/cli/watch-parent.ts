/**
 * Whether npm started this process (`npm start`, `npm run`, `npx`, `npm exec`): npm puts these
 * variables in the environment of everything it runs.
 */
export function startedByNpm(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env["npm_lifecycle_event"] || env["npm_command"]);
}

/**
 * Calls `onGone` once when this process's parent exits (it is then adopted: process.ppid, read
 * live, changes). Why: npm runs a command through `sh -c`, and on SIGTERM npm signals that shell
 * only; dash dies without passing the signal on, so `kill $!` on `npx modelstub serve` (or a
 * SIGKILL to npm) would leave the server running forever with its episodes unwritten. Checked
 * every `intervalMs` on an unref'd timer: it never keeps the process alive and costs a syscall.
 * Returns the function that stops watching.
 */
export function watchParent(onGone: () => void, intervalMs = 200): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    // The reader of our stdout and stderr may have gone with the parent: a log line lost to
    // EPIPE must not crash the drain that writes the episodes.
    process.stdout.on("error", () => undefined);
    process.stderr.on("error", () => undefined);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
