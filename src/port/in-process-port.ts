import type { GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { Stub } from "../engine/create-stub.js";
import { checkSessionName } from "../engine/check-session-name.js";
import { modelsOf } from "../engine/models-of.js";
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, ModelSchema } from "../../gen/modelstub/v1/model_pb.js";
import type { CallResult } from "../engine/call-result.js";
import type { CallInput } from "../engine/call-input.js";
import { Code } from "../shared/status-code.js";
import { deadlineStatus } from "../engine/execution.js";
import { LazyAbort } from "../shared/lazy-abort.js";
import { StatusError } from "../shared/status-error.js";
import { ModelCallError, type GenerateRequestInit, type ModelPort, type PortCallOptions } from "./model-port.js";

/** How one call can be cut off: its signal, its budget, and what to undo when it ends. */
interface CallAbort {
  readonly signal: AbortSignal;
  readonly budgetMs: number;
  /** Cancels the call (a stream whose consumer stopped early). */
  cancel(): void;
  release(): void;
}

/**
 * An abort signal for one call: the caller's signal cancels, the timeout is a deadline. The
 * signal itself is made only when the engine asks for it (LazyAbort): most calls never wait, and
 * an AbortController per call was the largest single cost of an in-process call in the profile.
 */
function callAbort(options: PortCallOptions | undefined): CallAbort {
  const lazy = new LazyAbort();
  const outer = options?.signal;
  const onCancel = () => lazy.abort("cancelled");
  outer?.addEventListener("abort", onCancel, { once: true });
  if (outer?.aborted) onCancel();
  const timeoutMs = options?.timeoutMs;
  const timer = timeoutMs !== undefined ? setTimeout(() => lazy.abort("deadline"), timeoutMs) : undefined;
  return {
    get signal() {
      return lazy.signal;
    },
    budgetMs: timeoutMs ?? Infinity,
    cancel: onCancel,
    release() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onCancel);
    },
  };
}

function toError(result: Exclude<CallResult, { kind: "ok" }>): ModelCallError {
  switch (result.kind) {
    case "status":
      return new ModelCallError(result.status.code, result.status.message, result.status.trailers);
    case "aborted":
      return result.reason === "deadline"
        ? // The engine's words when the budget ran out there: the same details whichever side saw the deadline first.
          new ModelCallError(Code.DEADLINE_EXCEEDED, deadlineStatus.message)
        : new ModelCallError(Code.CANCELLED, "Cancelled on client");
    case "drop":
      return new ModelCallError(Code.UNAVAILABLE, "the script dropped the connection");
  }
}

/**
 * The result of a stub call that rejected. The stub never rejects by contract; should it
 * anyway, the caller gets INTERNAL like a gRPC client would, never a raw error or a hang.
 */
function internalResult(err: unknown): CallResult {
  return { kind: "status", status: StatusError.from(err).toStatus() };
}

/**
 * A port call as the engine takes it (a plain-object request made a GenerateRequest; a message
 * passes as it is); its signal is made only if the engine asks for it.
 */
function callInput(
  method: CallInput["method"],
  request: GenerateRequestInit,
  options: PortCallOptions | undefined,
  a: CallAbort,
  onFrame?: CallInput["onFrame"],
): CallInput {
  return {
    session: options?.session ?? "default",
    method,
    request: create(GenerateRequestSchema, request),
    stepFromMetadata: options?.step,
    get signal() {
      return a.signal;
    },
    budgetMs: a.budgetMs,
    onFrame,
  };
}

/** How many frames a stream call queues for a consumer that has not taken them before it waits. */
const maxQueuedFrames = 16;

/** A model port that runs calls on a stub in this process: no network, same engine. */
export function createInProcessPort(stub: Stub): ModelPort {
  return {
    async generate(request, options) {
      const a = callAbort(options);
      try {
        const result = await stub.call(callInput("generate", request, options, a)).catch(internalResult);
        if (result.kind === "ok") return result.response;
        throw toError(result);
      } finally {
        a.release();
      }
    },
    async *generateStream(request: GenerateRequestInit, options?: PortCallOptions): AsyncIterable<GenerateStreamResponse> {
      const a = callAbort(options);
      const frames: GenerateStreamResponse[] = [];
      let wake: (() => void) | undefined;
      // Back-pressure, as over the wire: a consumer that stops taking frames holds the call.
      let room: (() => void) | undefined;
      const letThrough = () => {
        const r = room;
        room = undefined;
        r?.();
      };
      let finished: CallResult | undefined;
      const done = stub
        .call(
          callInput("stream", request, options, a, (f) => {
            frames.push(f);
            wake?.();
            return frames.length < maxQueuedFrames ? undefined : new Promise<void>((resolve) => (room = resolve));
          }),
        )
        .catch(internalResult)
        .then((r) => {
          finished = r;
          wake?.();
        });
      try {
        for (;;) {
          while (frames.length > 0) yield frames.shift()!;
          letThrough();
          if (finished) break;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
        if (finished.kind !== "ok") throw toError(finished);
      } finally {
        // A consumer that stops early cancels the call, like a gRPC client would.
        if (!finished) a.cancel();
        letThrough();
        await done;
        a.release();
      }
    },
    async listModels(options) {
      options?.signal?.throwIfAborted();
      const session = options?.session ?? "default";
      const bad = checkSessionName(session);
      if (bad) throw new ModelCallError(bad.code, bad.message);
      return modelsOf(stub.scriptOf(session)).map((m) => create(ModelSchema, m));
    },
    close() {},
  };
}
