import type { sendUnaryData, ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation } from "@grpc/grpc-js";
import { checkRequestBytes, requestLimits, type RequestLimits } from "../engine/request-limits.js";
import { Code } from "../engine/status-code.js";
import type { Logger } from "../log/create-logger.js";
import { metadataText, sessionOf, stepHeader } from "./call-context.js";
import type { RequestCheck } from "./service-definition.js";

/** What the deserializer hands a handler in place of a request past a limit. */
export class RequestOverLimit {
  constructor(readonly message: string) {}
}

/**
 * The request checks of ModelService's Generate and GenerateStream: a request past the limits
 * (engine/request-limits.ts) becomes a RequestOverLimit before protobuf-es decodes a byte of it.
 */
export function modelRequestChecks(limits: Readonly<RequestLimits> = requestLimits): Record<string, RequestCheck> {
  const check: RequestCheck = (bytes) => {
    const over = checkRequestBytes(bytes, limits);
    return over ? new RequestOverLimit(over.message) : undefined;
  };
  return { Generate: check, GenerateStream: check };
}

/**
 * Wraps ModelService handlers so a RequestOverLimit ends the call with RESOURCE_EXHAUSTED (and a
 * refusal log line) before the handler sees it: the call is in no episode.
 */
export function refuseOverLimit(handlers: UntypedServiceImplementation, logger?: Logger): UntypedServiceImplementation {
  const refusal = (method: string, call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>) => {
    if (!(call.request instanceof RequestOverLimit)) return undefined;
    const message = call.request.message;
    logger?.grpcRefused(method, { session: sessionOf(call.metadata).slice(0, 140), step: metadataText(call.metadata, stepHeader).slice(0, 140), code: Code.RESOURCE_EXHAUSTED, message });
    return { code: Code.RESOURCE_EXHAUSTED, details: message };
  };
  const generate = handlers["Generate"] as (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void;
  const generateStream = handlers["GenerateStream"] as (call: ServerWritableStream<unknown, unknown>) => void;
  return {
    ...handlers,
    Generate(call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
      const refused = refusal("Generate", call);
      if (refused) return callback(refused);
      generate(call, callback);
    },
    GenerateStream(call: ServerWritableStream<unknown, unknown>) {
      const refused = refusal("GenerateStream", call);
      if (refused) return void call.emit("error", refused);
      generateStream(call);
    },
  };
}
