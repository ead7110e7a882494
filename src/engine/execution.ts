import type { RenderedReply } from "./render-reply.js";
import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { abortReasonOf, waitForAbort } from "./abort-reason.js";
import type { CallInput } from "./call-input.js";
import type { Clock } from "./clock.js";
import type { CallStatus } from "../script/compiled-script.js";
import type { Ending } from "./ending.js";
import type { RunningCall } from "./session.js";
import { Code } from "../shared/status-code.js";
import { LazyAbort } from "../shared/lazy-abort.js";

/** The status recorded when the caller's deadline cuts a call off, on either clock. */
export const deadlineStatus: CallStatus = { code: Code.DEADLINE_EXCEEDED, message: "cut off by the caller's deadline", trailers: [] };
const cancelledStatus: CallStatus = { code: Code.CANCELLED, message: "cancelled by the client", trailers: [] };

/** Thrown inside a call when its declared waits reach its budget. */
const budgetReached = Symbol("budget reached");

/**
 * One call while it runs: its declared time, the frames it has sent, and how it is cut off. Its
 * waits are the only places a call sleeps on the clock, so the budget and the cut-offs are
 * decided here, in one place, for the unary and the streaming paths alike.
 */
export class Execution implements RunningCall {
  elapsed = 0;
  chunksSent = 0;
  /** The reply a stream is sending (its chunks: what the episode's sent_text_chunks are cut from). */
  streamed: RenderedReply | undefined;
  /** Set when a reset or reload closed the call's episode: the status the call ends with. */
  closedBy: CallStatus | undefined;
  private onOuterAbort: (() => void) | undefined;
  /**
   * The call's own signal: aborted when the transport cuts the call off (with its reason) or
   * when a reset closes the call's episode. Made on first use, like the transport's: most calls
   * never wait.
   */
  private readonly own = new LazyAbort((abort) => {
    const outer = this.input.signal;
    if (outer.aborted) return abort(outer.reason);
    this.onOuterAbort = () => abort(outer.reason);
    outer.addEventListener("abort", this.onOuterAbort, { once: true });
  });
  constructor(
    private clock: Clock,
    private input: CallInput,
    /** The caller's budget on the declared timeline (see declaredBudgetMs in clock.ts). */
    private budget: number,
  ) {}

  /** The call's own signal (see `own`). */
  get signal(): AbortSignal {
    return this.own.signal;
  }

  /** Whether the call has been cut off, without making a signal for a call that never waited. */
  get aborted(): boolean {
    return this.closedBy !== undefined || (this.own.made ?? this.input.signal).aborted;
  }

  /** Cuts the call off because its episode closed (RunningCall). A call already cut stays as it was. */
  close(status: CallStatus): void {
    if (this.aborted) return;
    this.closedBy = status;
    this.own.abort(episodeClosed);
  }

  /** Detaches from the transport's signal; once, when the call ends. */
  release(): void {
    if (this.onOuterAbort) this.input.signal.removeEventListener("abort", this.onOuterAbort);
  }

  /**
   * Waits `ms` of declared time. A wait that would carry the call's declared time to its budget
   * or past it ends the call as DEADLINE_EXCEEDED when the budget runs out, on both clocks: the
   * virtual one at once, the real one after sleeping up to the budget (unless the cut-off comes
   * first). So the declared timeline decides the outcome, never a race between timers.
   */
  async wait(ms: number): Promise<void> {
    if (ms === 0) return;
    if (this.elapsed + ms >= this.budget) return this.untilBudget();
    try {
      await this.clock.sleep(ms, this.signal);
    } catch (err) {
      // This wait ends inside the budget on the declared timeline, so a deadline that cuts it
      // came early only by the clocks: the caller's deadline runs from when it sent, the
      // server's from when it read the call, and on a starved machine the caller's can pass
      // while a 5 ms latency is still sleeping. The declared timeline completes the wait either
      // way, so the recorded end does not depend on the load.
      if (this.cutByDeadline()) this.elapsed += ms;
      throw err;
    }
    // Declared, not measured: the timeline advances by what the script said.
    this.elapsed += ms;
  }

  /** Whether the transport cut the call off for its deadline (not a cancel, not a reset). */
  private cutByDeadline(): boolean {
    if (this.closedBy) return false;
    const signal = this.own.made ?? this.input.signal;
    return signal.aborted && abortReasonOf(signal) === "deadline";
  }

  /**
   * Waits until the transport can take more frames (`ready` settles), or until the call is cut
   * off, whichever comes first: a stalled reader never holds a cut-off call. The abort listener
   * is removed either way. A transport's failure (`ready` rejects) ends the call like a throw.
   */
  async drained(ready: Promise<void>): Promise<void> {
    const signal = this.signal;
    if (signal.aborted) {
      // Nobody waits on it now: a later failure of the transport must not go unhandled.
      ready.catch(() => {});
      throw signal.reason;
    }
    let onAbort: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        ready.then(resolve, reject);
      });
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  }

  /** Waits forever: until the budget, when the call has one, or until the call is cut off. */
  hang(): Promise<never> {
    if (Number.isFinite(this.budget)) return this.untilBudget();
    return waitForAbort(this.signal);
  }

  private async untilBudget(): Promise<never> {
    if (this.clock.kind === "real") await this.clock.sleep(this.budget - this.elapsed, this.signal);
    throw budgetReached;
  }

  /** How a call that threw `err` ends: cut off (deadline, cancel, closed episode), or rethrown. */
  endingOf(err: unknown): Ending {
    // A call cut off by its deadline, however the cut reached the server (its own timer, the
    // client's reset, a stall), ends where its completed waits got to, never at the budget: the
    // budget arrives measured, and on a loaded machine tens of ms short, differently each run.
    if (err === budgetReached) return { result: { kind: "status", status: deadlineStatus }, outcome: Outcome.DEADLINE_EXCEEDED, status: deadlineStatus };
    // The transport has not ended this call: the closing status goes on the wire.
    if (this.closedBy) return { result: { kind: "status", status: this.closedBy }, outcome: Outcome.CANCELLED, status: this.closedBy };
    const signal = this.own.made ?? this.input.signal;
    if (!signal.aborted) throw err;
    const reason = abortReasonOf(signal);
    return reason === "deadline"
      ? { result: { kind: "aborted", reason }, outcome: Outcome.DEADLINE_EXCEEDED, status: deadlineStatus }
      : { result: { kind: "aborted", reason }, outcome: Outcome.CANCELLED, status: cancelledStatus };
  }
}

/** The abort reason of a call whose episode a reset or reload closed. */
const episodeClosed = "episode closed";
