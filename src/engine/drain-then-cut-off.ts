import type { CallStatus } from "../script/compiled-script.js";
import { Code } from "../shared/status-code.js";
import type { Stub } from "./stub.js";
import { waitDrained } from "./wait-drained.js";

/**
 * The status of a call still running when the shutdown's grace period is over, on the wire and
 * in the episode alike. UNAVAILABLE, not CANCELLED: the server, not the client, cut the call, and
 * UNAVAILABLE is what gRPC retry policies, the HTTP dialects' 503/529 and the docs' retry advice
 * retry (on another instance, or this one once restarted); CANCELLED says the client gave up.
 */
export const shutdownStatus: CallStatus = {
  code: Code.UNAVAILABLE,
  message: "modelstub shut down while this call was running: its grace period was over",
  trailers: [],
};

/**
 * How long the transports get, once the calls are cut off, to put each call's status on the wire
 * before their connections are closed: a status a client could not read within this (its reader
 * stalled behind a full window) is lost to the connection's close.
 */
export const statusFlushMs = 1000;

/**
 * The engine's half of a shutdown: new calls are refused, calls in flight get `graceMs` to end,
 * and the rest are then ended by the engine itself with shutdownStatus, which their transports
 * write as their status and their episodes record. So every call cut off by a shutdown ends
 * with one status the client and the episode agree on, before any connection closes (a closing
 * connection's GOAWAY or reset reads as CANCELLED or UNAVAILABLE by timing, and is recorded as
 * the client's cancel). `leftMs`: what is left of the grace for the transports to finish writing.
 */
export async function drainThenCutOff(stub: Stub, graceMs: number, onGraceOver?: () => void): Promise<{ finished: boolean; leftMs: number; cutOff: number }> {
  stub.drain();
  const drained = await waitDrained(stub, graceMs);
  if (drained.finished) return { ...drained, cutOff: 0 };
  onGraceOver?.();
  const cutOff = stub.cutOff(shutdownStatus);
  // Cut calls end at their next turn of the loop; the bound is for a call stuck elsewhere.
  await waitDrained(stub, statusFlushMs);
  return { finished: false, leftMs: 0, cutOff };
}
