/**
 * The clock every wait of the engine goes through. Two ship: the real one, and a virtual one
 * under which declared waits complete at once while virtual time advances by exactly the
 * declared amount. Global timers are never faked: grpc-js runs its deadlines and transport on
 * them.
 */
export interface Clock {
  /** "real" waits on timers; "virtual" completes waits at once. */
  readonly kind: "real" | "virtual";
  /** Milliseconds on this clock. Only for reporting: nothing recorded reads it. */
  now(): number;
  /**
   * Waits `ms` milliseconds. Rejects with `signal.reason` as soon as the signal aborts, and
   * releases its timer and listener either way.
   */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The wall clock: waits are real timers. */
export function createRealClock(): Clock {
  return {
    kind: "real",
    now: () => performance.now(),
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal.aborted) {
          reject(signal.reason);
          return;
        }
        const onAbort = () => {
          clearTimeout(timer);
          reject(signal.reason);
        };
        const timer = setTimeout(() => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        }, ms);
        signal.addEventListener("abort", onAbort, { once: true });
      });
    },
  };
}

/** A virtual clock starting at `startMs`: every sleep advances it and resolves at once. */
export function createVirtualClock(startMs = 0): Clock & { advance(ms: number): void } {
  let now = startMs;
  return {
    kind: "virtual",
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    sleep(ms, signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      now += ms;
      return Promise.resolve();
    },
  };
}

/** The grain of a call's deadline budget, in ms. */
export const budgetGrainMs = 10;

/**
 * The budget a call's declared waits are held against, on either clock: the caller's remaining
 * time, rounded UP to whole 10 ms. The remaining time arrives measured (grpc-timeout is counted
 * from the client's clock when it sends, and the server loses a little more before the handler
 * runs), so it is a few ms short of the deadline the caller chose, by a different amount each
 * run. Rounding up recovers a deadline given in whole 10 ms exactly while less than 10 ms was
 * lost, so the same declared timeline lands on the same side of the deadline in every run, and
 * a call cut off by its deadline records the same end time on both clocks. Rounding down would
 * fall on either side depending on whether a millisecond was lost. Infinity (no deadline) stays
 * Infinity; a call that arrives past its deadline has a budget of 0.
 */
export function declaredBudgetMs(remainingMs: number): number {
  if (!Number.isFinite(remainingMs)) return remainingMs;
  if (remainingMs <= 0) return 0;
  // A hair of tolerance so float noise (a budget of 5000.0000001) does not round up a grain.
  return Math.ceil(remainingMs / budgetGrainMs - 1e-9) * budgetGrainMs;
}
