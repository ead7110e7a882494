import type { AnyCall } from "./call-signal.js";

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
