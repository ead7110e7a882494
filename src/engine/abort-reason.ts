/**
 * Why a call was cut off. Transports abort a call's signal with one of these reasons: the
 * gRPC server with "deadline" when the caller's deadline passed and "cancelled" otherwise,
 * the in-process port the same way.
 */
export type AbortReason = "deadline" | "cancelled";

/** The reason a signal was aborted with, read defensively: anything unexpected is a cancel. */
export function abortReasonOf(signal: AbortSignal): AbortReason {
  return signal.reason === "deadline" ? "deadline" : "cancelled";
}

/** Resolves never; rejects with the signal's reason when it aborts. Holds no timer. */
export function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
