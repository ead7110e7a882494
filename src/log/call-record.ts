import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { codeName } from "../shared/status-code.js";

/**
 * One model call (or HTTP request) as the log sees it, whichever transport carried it: the gRPC
 * service and the HTTP front each turn their own view of a call into this record, so the log
 * knows neither of them.
 */
export interface CallRecord {
  transport: "grpc" | "http";
  /** The gRPC method (`Generate`), or the HTTP request line's method and path (`POST /v1/chat/completions`). */
  method: string;
  /** The HTTP status sent (HTTP only): 499 when the client went away first, 0 when the script dropped the link. */
  status?: number | undefined;
  session: string;
  /** Step id, "" when none. */
  step: string;
  /** The script entry that answered, like `entries[2]`; "" when none did. */
  entry: string;
  /** The answering entry's `name:`, when the script gives one. */
  entryName?: string | undefined;
  /** The model the request names (model calls the engine ran). */
  model?: string | undefined;
  /** The request's last user message, whole; the log line quotes its first 60 characters. */
  lastUser?: string | undefined;
  /** The call's sequence number in its episode (gRPC calls the engine ran). */
  sequence?: number | undefined;
  /**
   * The engine's outcome name (OK, ERROR, STREAM_BROKEN, ...); REFUSED for a call answered before
   * it ran, so in no episode; "" for HTTP requests that are not model calls.
   */
  outcome: string;
  /** The status code name the call ended with (OK, RESOURCE_EXHAUSTED, ...). */
  code?: string | undefined;
  /** Declared (never measured) latency of the call, in ms. */
  declaredMs: number;
  /** Why a refused call was refused. */
  message?: string | undefined;
}

/**
 * The outcome logged, on either transport, for a model call refused before it ran (draining, a
 * cap, an unreadable request): not an episode outcome, since such a call is recorded nowhere.
 */
export const refusedOutcome = "REFUSED";

/** The name of an outcome, like `STREAM_BROKEN`. */
export function outcomeName(outcome: Outcome): string {
  return Outcome[outcome] ?? String(outcome);
}

/** What the engine reports of a call it ran (engine/call-log.ts's CallLog has these fields). */
export interface RanCall {
  entry: string;
  entryName?: string | undefined;
  sequence: number;
  model: string;
  lastUser: string;
  outcome: Outcome;
  code: number;
  declaredMs: number;
  message?: string | undefined;
}

/**
 * The log fields of a call the engine ran, the same on both transports: a field the engine
 * starts reporting is added here once, not in the gRPC service and the HTTP front each.
 */
export function ranCallFields(l: RanCall) {
  return {
    entry: l.entry,
    entryName: l.entryName,
    sequence: l.sequence,
    model: l.model,
    lastUser: l.lastUser,
    outcome: outcomeName(l.outcome),
    code: codeName(l.code),
    declaredMs: l.declaredMs,
    message: l.message,
  };
}
