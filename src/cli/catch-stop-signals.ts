import type { Stub } from "../engine/create-stub.js";
import { startedByNpm, watchParent } from "./watch-parent.js";

/** Waits until no call is in flight, or until `ms` pass; true when they all finished. */
export function drained(stub: Stub, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const deadline = Date.now() + ms;
    const poll = () => {
      if (stub.inFlight() === 0) return resolve(true);
      if (Date.now() >= deadline) return resolve(false);
      setTimeout(poll, 10);
    };
    poll();
  });
}

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
