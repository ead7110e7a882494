import type { CallStatus } from "../script/compiled-script.js";
import { Code } from "../shared/status-code.js";

/** A limit of the stub itself: retrying cannot lift it, a reset (or a restart) does. */
export function limitStatus(message: string): CallStatus {
  return { code: Code.RESOURCE_EXHAUSTED, message, trailers: [], retryable: false };
}
