import type { ServerUnaryCall, ServerWritableStream } from "@grpc/grpc-js";
import type { GenerateRequest, GenerateStreamRequest } from "../../gen/modelstub/v1/model_pb.js";
import type { CallLog } from "../engine/call-log.js";
import { ranCallFields, refusedOutcome } from "../log/call-record.js";
import type { Logger } from "../log/create-logger.js";
import type { CallStatus } from "../script/compiled-script.js";
import { codeName } from "../shared/status-code.js";
import { metadataText, sessionOf } from "./call-metadata.js";
import { stepHeader } from "../shared/header-names.js";
import { grpcStatusError } from "./grpc-status-error.js";
import { overLimitStatus, RequestOverLimit } from "./limit-request.js";
import { DeferredRequest } from "./deferred-request.js";

/** One log line per call of a method, refused calls included (see callLogOf). */
export interface CallLogger {
  /** The engine's report of a call it ran (CallInput.onLog); undefined without a logger. */
  onLog: ((l: CallLog) => void) | undefined;
  /** Logs `status` as a refusal when the engine did not run the call (it reported nothing). */
  ifRefused(status: CallStatus): void;
}

/**
 * One log line per call, refused calls included. The engine reports every call it runs
 * (onLog); a call it refused before running (draining, a cap, a bad session name or step id)
 * ends with a status and no report, and a request past the limits never reaches it: those are
 * logged here.
 */
function callLogOf(logger: Logger | undefined, method: "Generate" | "GenerateStream", session: string, step: string): CallLogger {
  let reported = false;
  return {
    onLog: logger
      ? (l: CallLog) => {
          reported = true;
          logger.call({ transport: "grpc", method, session: l.session, step: l.step, ...ranCallFields(l) });
        }
      : undefined,
    ifRefused(status: CallStatus) {
      // A refused name or step can be any length: the line keeps as much of it as the status message does.
      if (reported || !logger) return;
      logger.call({
        transport: "grpc",
        method,
        session: session.slice(0, 140),
        step: step.slice(0, 140),
        entry: "",
        outcome: refusedOutcome,
        code: codeName(status.code),
        declaredMs: 0,
        message: status.message,
      });
    },
  };
}

/** A Generate or GenerateStream call as grpc-js hands it over: its request, a request past a limit, or one of MBs still to decode. */
export type ModelCall<R> =
  | ServerUnaryCall<R | RequestOverLimit | DeferredRequest, unknown>
  | ServerWritableStream<R | RequestOverLimit | DeferredRequest, unknown>;

/** A call admitted with a request of MBs not decoded yet: `decode()` (on the call's heavy turn) gives it, admitted, or throws as the decoder does. */
export interface AdmittedLater<R> {
  decode(): Admitted<R>;
}

/** A call admitted to the engine: a request within the limits, and what every call carries along. */
export interface Admitted<R> {
  request: R;
  session: string;
  stepFromMetadata: string;
  log: CallLogger;
}

/**
 * Admits a Generate or GenerateStream call: a request past a limit is refused here, before the
 * engine sees it, so it is in no episode (the log still says why). The session name and the
 * step id are the engine's to check, as for every transport. Answers undefined when refused.
 */
export function admit<R extends GenerateRequest | GenerateStreamRequest>(
  call: ModelCall<R>,
  method: "Generate" | "GenerateStream",
  logger: Logger | undefined,
  refuse: (e: ReturnType<typeof grpcStatusError>) => void,
): Admitted<R> | AdmittedLater<R> | undefined {
  const session = sessionOf(call.metadata);
  const stepFromMetadata = metadataText(call.metadata, stepHeader);
  const request = call.request;
  if (request instanceof DeferredRequest) {
    return { decode: () => admitted(request.decode() as R) };
  }
  if (request instanceof RequestOverLimit) {
    const status = overLimitStatus(request);
    callLogOf(logger, method, session, stepFromMetadata).ifRefused(status);
    refuse(grpcStatusError(status));
    return undefined;
  }
  return admitted(request);

  function admitted(r: R): Admitted<R> {
    return { request: r, session, stepFromMetadata, log: callLogOf(logger, method, session, r.stepId || stepFromMetadata) };
  }
}
