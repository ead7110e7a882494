import type { CallStatus } from "../script/compiled-script.js";
import { heavyRequestBytes } from "../shared/heavy-turns.js";
import { Code } from "../shared/status-code.js";
import type { RequestDecoder } from "./service-definition.js";

/**
 * A request of MBs as the deserializer hands it over: its bytes, decoded on the call's heavy
 * turn (model-service.ts), not in grpc-js's message pipeline. Sixty-four 960 KB requests arriving
 * together on one connection were decoded back to back in one run of microtasks (2-3 ms each,
 * the UTF-8 check of their text): 45-61 ms of the loop before any other session's call was
 * looked at, where HTTP bodies of the same size already took turns.
 */
export class DeferredRequest {
  constructor(
    readonly bytes: Buffer,
    private readonly decoder: RequestDecoder,
  ) {}

  /** The request, as the decoder gives it; throws as it does (the call then ends as grpc-js ends one it cannot deserialize). */
  decode(): unknown {
    return this.decoder(this.bytes);
  }
}

/** `decode`, deferring a request of heavyRequestBytes or more to its call's turn (a DeferredRequest). */
export function deferringLarge(decode: RequestDecoder): RequestDecoder {
  return (bytes) => (bytes.length >= heavyRequestBytes ? new DeferredRequest(bytes, decode) : decode(bytes));
}

/**
 * The status grpc-js answers a request it cannot deserialize with, word for word (its
 * server-interceptors.ts), so a deferred request that fails to decode ends as it would have.
 */
export function undecodableStatus(err: unknown): CallStatus {
  const detailed = (process.env["GRPC_NODE_DEBUG_SEND_ERROR_DETAILS"] ?? "false") === "true";
  return {
    code: Code.INTERNAL,
    message: detailed ? `Error deserializing request: ${err instanceof Error ? err.message : String(err)}` : "Error deserializing request",
    trailers: [],
  };
}
