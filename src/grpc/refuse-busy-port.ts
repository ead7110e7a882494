import { createServer } from "node:net";

/**
 * Rejects when `host:port` is taken, by listening there for a moment first. grpc-js's bindAsync
 * refuses a busy port too, but prints `E No address added out of total 1 resolved` on stderr
 * through its global logger before it rejects: a line the caller's own error already says
 * better, out of place in a JSON log and in a test's output. Port 0 is always free. A port taken
 * between this check and the bind still fails the bind, only with grpc-js's line.
 */
export function refuseBusyPort(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE")
        reject(
          Object.assign(new Error(`${host}:${port} is in use (EADDRINUSE): another process listens there; pick another port, or 0 for a free one`), {
            code: err.code,
          }),
        );
      // Anything else (an unknown host, an address not on this machine) is for the bind to report.
      else resolve();
    });
    probe.listen({ host: host.replace(/^\[(.*)\]$/, "$1"), port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
