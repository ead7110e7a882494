/**
 * An abort signal made on first use. Most calls never wait, so they never look at their signal:
 * an AbortController (and the listeners wiring it to its causes) made per call showed up in
 * profiles of the unary hot paths, gRPC, HTTP and in-process alike. An abort before the signal
 * exists is kept, and the signal is born aborted with its reason.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private pending: { reason: unknown } | undefined;

  /** `wire(abort)`, on first use: connects the signal to its causes (not called when already aborted). */
  constructor(private readonly wire?: (abort: (reason: unknown) => void) => void) {}

  /** The signal; made, and wired, now if it was not yet. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.pending) controller.abort(this.pending.reason);
      else this.wire?.((reason) => controller.abort(reason));
    }
    return this.controller.signal;
  }

  /** The signal if anyone made it, without making it. */
  get made(): AbortSignal | undefined {
    return this.controller?.signal;
  }

  /** Whether the call is cut off, without making a signal for a call that never waited. */
  get aborted(): boolean {
    return this.controller ? this.controller.signal.aborted : this.pending !== undefined;
  }

  /** Aborts with `reason` (now, or as the signal is made); a second abort changes nothing. */
  abort(reason: unknown): void {
    if (this.controller) this.controller.abort(reason);
    else this.pending ??= { reason };
  }
}
