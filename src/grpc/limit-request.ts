import type { CallStatus } from "../script/compiled-script.js";
import { checkRequestBytes, requestLimits, type RequestLimits } from "../engine/request-limits.js";
import { Code } from "../shared/status-code.js";
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
 * The status that refuses a request past a limit: the call is in no episode (model-service.ts
 * refuses it before the engine sees it, logging it as the engine's refusals are).
 */
export function overLimitStatus(over: RequestOverLimit): CallStatus {
  return { code: Code.RESOURCE_EXHAUSTED, message: over.message, trailers: [] };
}
