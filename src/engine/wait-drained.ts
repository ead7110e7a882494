import type { Stub } from "./create-stub.js";

/**
 * Waits until the stub has no call in flight, or until `graceMs` pass. `leftMs` is what is left
 * of the grace period: a transport gets it to finish writing what the finished calls answered,
 * since a call the engine has finished may still have bytes on their way to its client.
 * Wall-clock time, operational only: it decides when the process stops, never what is recorded.
 */
export async function waitDrained(stub: Stub, graceMs: number): Promise<{ finished: boolean; leftMs: number }> {
  const deadline = Date.now() + graceMs;
  while (stub.inFlight() > 0) {
    if (Date.now() >= deadline) return { finished: false, leftMs: 0 };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { finished: true, leftMs: Math.max(0, deadline - Date.now()) };
}
