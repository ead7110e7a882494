import type { Stub } from "../engine/create-stub.js";
import type { Logger } from "../log/create-logger.js";

/**
 * Lets go of the sessions idle for `idleMs` (Stub.evictIdle), one log line each, checking a few
 * times per timeout (at most once a second). Wall-clock time whatever the --clock: eviction is
 * operational and never changes what an episode records. Returns the function that stops it.
 */
export function startIdleEviction(stub: Stub, idleMs: number, logger: Logger): () => void {
  const timer = setInterval(
    () => {
      for (const e of stub.evictIdle(idleMs)) {
        e.closed.then(
          (calls) => logger.info("session evicted", { session: e.name, idle_ms: e.idleMs, calls }),
          // The recorder has logged the write's error; this says the session went all the same.
          (err: unknown) => logger.warn("session evicted", { session: e.name, idle_ms: e.idleMs, recorded: false, error: (err as Error).message }),
        );
      }
    },
    Math.min(1000, Math.max(10, Math.floor(idleMs / 4))),
  );
  // Never what keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
