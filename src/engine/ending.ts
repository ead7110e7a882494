import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import type { GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { CallResult } from "./call-result.js";
import type { CallStatus } from "../script/compiled-script.js";
import { Code } from "../shared/status-code.js";
import { StatusError } from "../shared/status-error.js";
import { TemplateTooLargeError } from "../shared/template-too-large-error.js";

/**
 * How a call ended, in full: what the transport gets (`result`) and what the episode records
 * (outcome, status, response, stream break). Internal to the engine; transports see CallResult.
 */
export interface Ending {
  result: CallResult;
  outcome: Outcome;
  status?: CallStatus | undefined;
  response?: GenerateResponse | undefined;
  streamBreak?: StreamBreak;
}

/** The status of a call that threw something unexpected (a template too large included). */
export function internalStatus(err: unknown): CallStatus {
  // Not worth a retry: the same request renders the same reply (the HTTP front says so to SDKs).
  if (err instanceof TemplateTooLargeError) return { code: Code.RESOURCE_EXHAUSTED, message: err.message, trailers: [], retryable: false };
  return StatusError.from(err).toStatus();
}

/**
 * A retry of a dropped call that no entry answers (CallInput.retryOfDrop): dropped like the
 * call it retries, recorded with the status that says why (UNAVAILABLE, as gRPC reports a dead
 * link) and what the script would have answered.
 */
export function redroppedEnding(miss: CallStatus): Ending {
  const status: CallStatus = {
    code: Code.UNAVAILABLE,
    message: `dropped: a client's retry of a request the script dropped, and no entry answers it (${miss.message})`,
    trailers: [],
  };
  return { result: { kind: "drop" }, outcome: Outcome.STREAM_BROKEN, status, streamBreak: StreamBreak.DROP };
}

/** A call that ends with `status` as an error, before or without running its entry. */
export function statusEnding(status: CallStatus): Ending {
  return { result: { kind: "status", status }, outcome: Outcome.ERROR, status };
}
