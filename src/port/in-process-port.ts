import type { GenerateRequest, GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { Stub } from "../engine/create-stub.js";
import type { CallResult } from "../engine/call-result.js";
import { Code } from "../shared/status-code.js";
import { ModelCallError, type ModelPort, type PortCallOptions } from "./model-port.js";

/** How one call can be cut off: its signal, its budget, and what to undo when it ends. */
interface CallAbort {
  readonly signal: AbortSignal;
  readonly budgetMs: number;
  /** Cancels the call (a stream whose consumer stopped early). */
  cancel(): void;
  release(): void;
}

/**
 * A unary call with no signal and no timeout can never be cut off: it shares one signal that
 * never aborts instead of making an AbortController per call (the largest single cost of an
 * in-process call in the profile). Sharing it is safe: the engine removes every listener it adds
 * to a call's signal when the call ends.
 */
const uncut: CallAbort = { signal: new AbortController().signal, budgetMs: Infinity, cancel() {}, release() {} };

/** An abort signal for one call: the caller's signal cancels, the timeout is a deadline. */
function callAbort(options: PortCallOptions | undefined): CallAbort {
  const controller = new AbortController();
  const onCancel = () => controller.abort("cancelled");
  options?.signal?.addEventListener("abort", onCancel, { once: true });
  if (options?.signal?.aborted) onCancel();
  const timeoutMs = options?.timeoutMs;
  const timer = timeoutMs !== undefined ? setTimeout(() => controller.abort("deadline"), timeoutMs) : undefined;
  return {
    signal: controller.signal,
    budgetMs: timeoutMs ?? Infinity,
    cancel: () => controller.abort("cancelled"),
    release() {
      clearTimeout(timer);
      options?.signal?.removeEventListener("abort", onCancel);
    },
  };
}

function toError(result: Exclude<CallResult, { kind: "ok" }>): ModelCallError {
  switch (result.kind) {
    case "status":
      return new ModelCallError(result.status.code, result.status.message, result.status.trailers);
    case "aborted":
      return result.reason === "deadline"
        ? new ModelCallError(Code.DEADLINE_EXCEEDED, "Deadline exceeded")
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
  return { kind: "status", status: { code: Code.INTERNAL, message: `modelstub internal error: ${err instanceof Error ? err.message : String(err)}`, trailers: [] } };
}

/** How many frames a stream call queues for a consumer that has not taken them before it waits. */
const maxQueuedFrames = 16;

/** A model port that runs calls on a stub in this process: no network, same engine. */
export function createInProcessPort(stub: Stub): ModelPort {
  return {
    async generate(request, options) {
      const a = options?.signal === undefined && options?.timeoutMs === undefined ? uncut : callAbort(options);
      try {
        const result = await stub
          .call({
            session: options?.session ?? "default",
            method: "generate",
            request,
            stepFromMetadata: options?.step,
            signal: a.signal,
            budgetMs: a.budgetMs,
          })
          .catch(internalResult);
        if (result.kind === "ok") return result.response;
        throw toError(result);
      } finally {
        a.release();
      }
    },
    async *generateStream(request: GenerateRequest, options?: PortCallOptions): AsyncIterable<GenerateStreamResponse> {
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
        .call({
          session: options?.session ?? "default",
          method: "stream",
          request,
          stepFromMetadata: options?.step,
          signal: a.signal,
          budgetMs: a.budgetMs,
          onFrame: (f) => {
            frames.push(f);
            wake?.();
            return frames.length < maxQueuedFrames ? undefined : new Promise<void>((resolve) => (room = resolve));
          },
        })
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
    close() {},
  };
}
