import { startedByNpm, watchParent } from "./watch-parent.js";

/**
 * Catches SIGTERM and SIGINT once; `received` resolves with the first one's name. Under npm it
 * also stops when the parent process exits (watchParent): npm's SIGTERM may never reach us.
 */
export function catchStopSignals(): { received: Promise<string>; release(): void } {
  let stop: (sig: string) => void = () => {};
  const received = new Promise<string>((resolve) => {
    stop = (sig: string) => {
      release();
      resolve(sig);
    };
  });
  const unwatch = startedByNpm(process.env) ? watchParent(() => stop("parent process exited")) : () => undefined;
  const release = () => {
    unwatch();
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return { received, release };
}
