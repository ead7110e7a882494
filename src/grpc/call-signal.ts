import type { ServerUnaryCall, ServerWritableStream } from "@grpc/grpc-js";
import { loopStallMs } from "./loop-watch.js";
import { LazyAbort } from "../shared/lazy-abort.js";

/** A server call of either kind the model service answers. */
export type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;

function deadlineMs(call: AnyCall): number {
  const d = call.getDeadline();
  return d instanceof Date ? d.getTime() : d;
}

/**
 * How close to its deadline a cut-off call counts as cut by the deadline rather than cancelled,
 * at least. A client resets the stream at its own deadline, counted from when it sent; the server
 * counts from when it read the request, a little later. The loop's stall before the call was read
 * is added on top (see loop-watch.ts).
 */
export const deadlineToleranceMs = 25;

/** A call's abort signal and remaining budget, wired to grpc-js's cancellation. */
export interface CallSignal {
  signal: AbortSignal;
  /** Milliseconds to the deadline when the handler ran, as grpc-js counts it; Infinity for none. */
  budgetMs: number;
  /** Detaches the listeners; call once when the call ends, however it ends. */
  release(): void;
}

/**
 * Wires a call's cancellation to an AbortSignal. grpc-js emits 'cancelled' for a client
 * cancel, for a passed deadline, and (on purpose, since 1.10) after a normal end; so the
 * listener is released at the end.
 *
 * Why the call was cut is judged on the caller's timeline, not on when this loop got round to
 * it: the cut is the deadline when it comes after the caller's deadline, less the tolerance and
 * less however long the loop was stalled before it read the request (time the caller's deadline
 * kept running unseen). Before that, the client cancelled. So a paused or starved server records
 * the same outcome as a quiet one.
 */
export function callSignal(call: AnyCall): CallSignal {
  const deadline = deadlineMs(call);
  const slack = deadlineToleranceMs + loopStallMs();
  // The signal, and the listener on grpc-js's 'cancelled', are made on first use (LazyAbort): most
  // calls of a script never wait. A call cut off before anyone looked is still seen:
  // call.cancelled says so when the signal is made.
  let onCancel: (() => void) | undefined;
  const lazy = new LazyAbort((abort) => {
    const cancel = () => abort(Date.now() >= deadline - slack ? "deadline" : "cancelled");
    if (call.cancelled) return cancel();
    onCancel = cancel;
    call.on("cancelled", onCancel);
  });
  return {
    get signal() {
      return lazy.signal;
    },
    budgetMs: Number.isFinite(deadline) ? deadline - Date.now() : Infinity,
    release: () => {
      if (onCancel) call.removeListener("cancelled", onCancel);
    },
  };
}
