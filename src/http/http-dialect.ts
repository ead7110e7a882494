import type { ServerResponse } from "node:http";
import type { Stub } from "../engine/create-stub.js";
import { Code } from "../shared/status-code.js";
import { answerCall, refused, type CallTarget, type DialectCall } from "./answer-call.js";
import type { Dialect } from "./dialect.js";
import { badRequestError, type ErrorShape } from "./http-error.js";
import type { HttpRequestLog } from "./http-log.js";
import type { BadRequest } from "./refusal.js";
import { sendError } from "./send.js";

/** A request a dialect has read: the engine's call, and the writer of its answer (which may depend on the request). */
export interface ReadCall extends DialectCall {
  wire: Dialect;
}

/**
 * One HTTP dialect of a model call, the unit the front routes by path (route.ts): the shape of
 * its errors, and how it reads a body into the engine's call and its answer's writer. Every
 * dialect's call then runs the same way (answerDialect, answerCall), so they all record the
 * same episode; a new dialect is one more of these.
 */
export interface HttpDialect {
  /** Its errors' body shape: the 400 of a body it refuses, and the front's own errors on its paths. */
  shape: ErrorShape;
  /** Reads a body; the first problem as data. `stub` and `target` for what a request may refer to (a Responses item_reference). */
  read(body: string, stub: Stub, target: CallTarget): { value: ReadCall } | { error: BadRequest };
}

/**
 * Answers one model call in dialect `d`: the body read (here, so its text is not held by a call
 * that waits on a slow reader), refused with a 400 in the dialect's shape, or run and answered.
 * Resolves with the log fields once the answer has ended; never rejects (a parser bug rejects,
 * and the server answers 500).
 */
export async function answerDialect(d: HttpDialect, stub: Stub, res: ServerResponse, body: string, target: CallTarget): Promise<Partial<HttpRequestLog>> {
  const read = d.read(body, stub, target);
  if ("error" in read) {
    sendError(res, badRequestError(read.error, d.shape));
    return { status: 400, ...refused(Code.INVALID_ARGUMENT, read.error.message) };
  }
  const { request, stream, wire } = read.value;
  return answerCall(stub, res, { request, stream }, target, wire);
}
