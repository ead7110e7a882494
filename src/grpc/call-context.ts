import { Metadata, type ServerUnaryCall, type ServerWritableStream } from "@grpc/grpc-js";
import type { CallStatus } from "../engine/compile-script.js";

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;

/** Metadata keys of the public contract. */
export const sessionHeader = "x-modelstub-session";
export const stepHeader = "x-modelstub-step";

/** The first text value of a metadata key, or "" when absent. */
export function metadataText(metadata: Metadata, key: string): string {
  const v = metadata.get(key)[0];
  return typeof v === "string" ? v : v ? v.toString("utf8") : "";
}

/** The session a call selects (`default` when it names none). */
export function sessionOf(metadata: Metadata): string {
  return metadataText(metadata, sessionHeader) || "default";
}

function deadlineMs(call: AnyCall): number {
  const d = call.getDeadline();
  return d instanceof Date ? d.getTime() : d;
}

/** How close to its deadline a cut-off call counts as cut by the deadline rather than cancelled. */
export const deadlineToleranceMs = 25;

/** A call's abort signal and remaining budget, wired to grpc-js's cancellation. */
export interface CallSignal {
  signal: AbortSignal;
  budgetMs: number;
  /** Detaches the listeners; call once when the call ends, however it ends. */
  release(): void;
}

/**
 * Wires a call's cancellation to an AbortSignal. grpc-js emits 'cancelled' for a client
 * cancel, for a passed deadline, and (on purpose, since 1.10) after a normal end; so the
 * listener is released at the end, and the reason is read off the deadline: past it, the
 * deadline cut the call; before it, the client cancelled.
 */
export function callSignal(call: AnyCall): CallSignal {
  const deadline = deadlineMs(call);
  // The controller is made on first use: most calls of a script never wait, and an
  // AbortController per call showed up in profiles of the unary hot path.
  let controller: AbortController | undefined;
  let reason: "deadline" | "cancelled" | undefined;
  const onCancel = () => {
    // A client whose deadline passes resets the stream itself, and that reset can arrive a
    // little before the server's own deadline timer fires (the server counts from arrival, the
    // client from sending). So a cut within the tolerance of the deadline is the deadline.
    reason = Date.now() >= deadline - deadlineToleranceMs ? "deadline" : "cancelled";
    controller?.abort(reason);
  };
  call.on("cancelled", onCancel);
  if (call.cancelled) onCancel();
  return {
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (reason) controller.abort(reason);
      }
      return controller.signal;
    },
    budgetMs: Number.isFinite(deadline) ? deadline - Date.now() : Infinity,
    release: () => {
      call.removeListener("cancelled", onCancel);
    },
  };
}

/** A grpc-js status error carrying the engine's status, with its trailers in order. */
export function statusError(status: CallStatus): { code: number; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  for (const [k, v] of status.trailers) metadata.add(k, v);
  return { code: status.code, details: status.message, metadata };
}

/**
 * Resets the call's HTTP/2 stream abruptly: the "link that dies". grpc-js has no public way to
 * do this, so this walks its call objects to the http2 stream; a test pins the behaviour, and
 * should the internals move, the call ends with UNAVAILABLE instead of hanging.
 */
export function dropCall(call: AnyCall): boolean {
  let c: unknown = (call as unknown as { call?: unknown }).call;
  for (let depth = 0; c && depth < 8; depth++) {
    const stream = (c as { stream?: { close?: (code: number) => void; destroyed?: boolean } }).stream;
    if (stream && typeof stream.close === "function") {
      // NGHTTP2_INTERNAL_ERROR: what a crashed or cut link looks like to the client.
      stream.close(2);
      return true;
    }
    c = (c as { nextCall?: unknown }).nextCall;
  }
  return false;
}
