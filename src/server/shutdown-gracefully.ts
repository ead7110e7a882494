import type { Stub } from "../engine/create-stub.js";
import { drainThenCutOff, statusFlushMs } from "../engine/drain-then-cut-off.js";
import { waitDrained } from "../engine/wait-drained.js";
import type { Recorder } from "../episode-files/create-recorder.js";
import type { Fronts } from "./start-fronts.js";

/** What shutdownGracefully() stops, and how. */
export interface ShutdownOptions {
  stub: Stub;
  fronts: Fronts;
  /** Where every episode with calls is written at the end. */
  recorder: Recorder;
  /** How long calls in flight may take to finish before they are cut off. */
  graceMs: number;
  /** Told once, when the grace is over with calls still running, before they are cut off. */
  onGraceOver?: () => void;
  /** Runs once the fronts have closed, before the last wait for calls (the library closes its clients there). */
  afterFrontsClosed?: () => void;
}

/** How a shutdown went: whether every call finished in the grace, how many were cut off, and the episode writes. */
export interface ShutdownReport {
  finished: boolean;
  cutOff: number;
  /** Episodes with calls given to the recorder at the end. */
  written: number;
  /** The recorder's failed writes over the server's life (recorder.failures()). */
  failed: number;
  /** How long the writes at the end took, ms: what an orchestrator's stop timeout must leave after the grace. */
  writeMs: number;
}

/**
 * The one shutdown of a modelstub server, `modelstub serve`'s on SIGTERM and the library's
 * close(): health says NOT_SERVING (orchestrators stop routing at once) and new calls are
 * refused; calls in flight get the grace period, and what still runs then is cut off with one
 * status, written before the connections close (drain-then-cut-off.ts says why). The rest of the
 * grace, and at least statusFlushMs, lets answers and statuses reach their clients; then every
 * episode with calls is written, after those a reset closed (so each session's file ends with
 * its last one). A failed write is counted, not thrown: the caller decides what it costs.
 */
export async function shutdownGracefully(options: ShutdownOptions): Promise<ShutdownReport> {
  const { stub, fronts, recorder } = options;
  fronts.grpc?.health.set("NOT_SERVING");
  // While calls finish, the files of the episodes about to be written are readied: what is
  // left to do after the grace is then the least it can be (write-episode-file.ts).
  recorder.prepare(
    stub
      .sessions()
      .filter((s) => s.calls > 0 || s.running > 0)
      .map((s) => s.name),
  );
  const { finished, leftMs, cutOff } = await drainThenCutOff(stub, options.graceMs, options.onGraceOver);
  // Closing gRPC at once could cut a response the transport is still writing.
  await fronts.close(Math.max(leftMs, statusFlushMs));
  options.afterFrontsClosed?.();
  await waitDrained(stub, 1000);
  await stub.closing();
  const writing = Date.now();
  let written = 0;
  for (const e of stub.episodes()) {
    if (e.calls.length === 0) continue;
    written++;
    void recorder.record(e, "shutdown").catch(() => undefined);
  }
  await recorder.settled();
  return { finished, cutOff, written, failed: recorder.failures(), writeMs: Date.now() - writing };
}
