import {
  CallMethod,
  Outcome,
  StreamBreak,
  type EpisodeCall,
} from "../../gen/modelstub/v1/episode_pb.js";
import {
  type GenerateRequest,
  type GenerateResponse,
  type GenerateStreamResponse,
} from "../../gen/modelstub/v1/model_pb.js";
import { abortReasonOf, waitForAbort } from "./abort-reason.js";
import { encodeEpisodeCall } from "./encode-episode.js";
import { declaredBudgetMs, type Clock } from "./clock.js";
import type { CallStatus, CompiledEntry } from "./compile-script.js";
import { planFrames } from "./plan-frames.js";
import { renderReply, type RenderedReply, type StreamChunk } from "./render-reply.js";
import { viewRequest } from "./request-view.js";
import { selectEntry } from "./select-entry.js";
import type { RunningCall, Session } from "./session.js";
import { Code } from "./status-code.js";
import { TemplateTooLargeError, type TemplateContext } from "./template.js";

/** One model call as a transport hands it to the engine. */
export interface CallInput {
  /** Session name; the caller has already checked it. */
  session: string;
  method: "generate" | "stream";
  request: GenerateRequest;
  /** Step id from metadata (`x-modelstub-step`), if any. */
  stepFromMetadata?: string | undefined;
  /** What carried stepFromMetadata, for messages: gRPC metadata (the default) or an HTTP header. */
  stepCarrier?: "metadata" | "header" | undefined;
  /**
   * Aborted with reason "deadline" or "cancelled" when the call is cut off. Read only when the
   * call waits or streams, so a transport may create it lazily (a getter): an AbortController
   * is a measurable part of a call that never waits.
   */
  readonly signal: AbortSignal;
  /**
   * Milliseconds the caller allows, measured at arrival; Infinity for no deadline. Only the
   * virtual clock reads it (a real deadline aborts the signal); it never enters the episode.
   */
  budgetMs?: number | undefined;
  /**
   * Receives stream frames (stream calls only). Returns nothing while the transport can take
   * more, so a reader that keeps up costs no promise per frame; returns a promise when its
   * buffer is full, and the call sends nothing more until it settles (back-pressure: see
   * README, "Streams and slow readers"). The engine stops waiting on its own when the call is
   * cut off, so the transport need not settle it then; it must release what the promise holds
   * when the call ends, however it ends. A frame is counted in `chunks_sent` when it is handed
   * over, before any wait.
   */
  onFrame?: ((frame: GenerateStreamResponse) => void | Promise<void>) | undefined;
  /**
   * Told once the call has its sequence number and declared start, before any frame: the HTTP
   * front derives its wire `created` from the declared timeline, never from the wall clock.
   */
  onStart?: ((start: { sequence: number; startMs: number }) => void) | undefined;
  /** Told about this call when it finishes, like the stub's onCall (per-request logs). */
  onLog?: ((log: CallLog) => void) | undefined;
}

/** How a call ended, for the transport to put on the wire. */
export type CallResult =
  | { kind: "ok"; response: GenerateResponse }
  /** End the call with this status. */
  | { kind: "status"; status: CallStatus }
  /** The call was cut off: the transport has ended it already; write nothing. */
  | { kind: "aborted"; reason: "deadline" | "cancelled" }
  /** Reset the transport stream abruptly (a scripted "link that dies"). */
  | { kind: "drop" };

/** What a finished call reports, for logs. */
export interface CallLog {
  session: string;
  method: "generate" | "stream";
  step: string;
  entry: string;
  sequence: number;
  outcome: Outcome;
  code: number;
  declaredMs: number;
}

/** The status recorded when the caller's deadline cuts a call off, on either clock. */
export const deadlineStatus: CallStatus = { code: Code.DEADLINE_EXCEEDED, message: "cut off by the caller's deadline", trailers: [] };
const cancelledStatus: CallStatus = { code: Code.CANCELLED, message: "cancelled by the client", trailers: [] };

/** Thrown inside a call when its declared waits reach its budget. */
const budgetReached = Symbol("budget reached");

class Execution implements RunningCall {
  elapsed = 0;
  chunksSent = 0;
  /** Set when a reset or reload closed the call's episode: the status the call ends with. */
  closedBy: CallStatus | undefined;
  private controller: AbortController | undefined;
  private onOuterAbort: (() => void) | undefined;
  constructor(
    private clock: Clock,
    private input: CallInput,
    /** The caller's budget on the declared timeline (see declaredBudgetMs in clock.ts). */
    private budget: number,
  ) {}

  /**
   * The call's own signal: aborted when the transport cuts the call off (with its reason) or
   * when a reset closes the call's episode. Made on first use, like the transport's: most calls
   * never wait.
   */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      const outer = this.input.signal;
      if (this.closedBy) controller.abort(episodeClosed);
      else if (outer.aborted) controller.abort(outer.reason);
      else {
        this.onOuterAbort = () => controller.abort(outer.reason);
        outer.addEventListener("abort", this.onOuterAbort, { once: true });
      }
    }
    return this.controller.signal;
  }

  /** Whether the call has been cut off, without making a signal for a call that never waited. */
  get aborted(): boolean {
    return this.closedBy !== undefined || (this.controller ?? this.input).signal.aborted;
  }

  /** Cuts the call off because its episode closed (RunningCall). A call already cut stays as it was. */
  close(status: CallStatus): void {
    if (this.aborted) return;
    this.closedBy = status;
    this.controller?.abort(episodeClosed);
  }

  /** Detaches from the transport's signal; once, when the call ends. */
  release(): void {
    if (this.onOuterAbort) this.input.signal.removeEventListener("abort", this.onOuterAbort);
  }

  /**
   * Waits `ms` of declared time. A wait that would carry the call's declared time to its budget
   * or past it ends the call as DEADLINE_EXCEEDED when the budget runs out, on both clocks: the
   * virtual one at once, the real one after sleeping up to the budget (unless the cut-off comes
   * first). So the declared timeline decides the outcome, never a race between timers.
   */
  async wait(ms: number): Promise<void> {
    if (ms === 0) return;
    if (this.elapsed + ms >= this.budget) return this.untilBudget();
    await this.clock.sleep(ms, this.signal);
    // Declared, not measured: the timeline advances by what the script said.
    this.elapsed += ms;
  }

  /**
   * Waits until the transport can take more frames (`ready` settles), or until the call is cut
   * off, whichever comes first: a stalled reader never holds a cut-off call. The abort listener
   * is removed either way. A transport's failure (`ready` rejects) ends the call like a throw.
   */
  async drained(ready: Promise<void>): Promise<void> {
    const signal = this.signal;
    if (signal.aborted) {
      // Nobody waits on it now: a later failure of the transport must not go unhandled.
      ready.catch(() => {});
      throw signal.reason;
    }
    let onAbort: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        ready.then(resolve, reject);
      });
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  }

  /** Waits forever: until the budget, when the call has one, or until the call is cut off. */
  hang(): Promise<never> {
    if (Number.isFinite(this.budget)) return this.untilBudget();
    return waitForAbort(this.signal);
  }

  private async untilBudget(): Promise<never> {
    if (this.clock.kind === "real") await this.clock.sleep(this.budget - this.elapsed, this.signal);
    throw budgetReached;
  }

  /** How a call that threw `err` ends: cut off (deadline, cancel, closed episode), or rethrown. */
  endingOf(err: unknown): Ending {
    // A call cut off by its deadline, however the cut reached the server (its own timer, the
    // client's reset, a stall), ends where its completed waits got to, never at the budget: the
    // budget arrives measured, and on a loaded machine tens of ms short, differently each run.
    if (err === budgetReached) return { result: { kind: "status", status: deadlineStatus }, outcome: Outcome.DEADLINE_EXCEEDED, status: deadlineStatus };
    // The transport has not ended this call: the closing status goes on the wire.
    if (this.closedBy) return { result: { kind: "status", status: this.closedBy }, outcome: Outcome.CANCELLED, status: this.closedBy };
    const signal = (this.controller ?? this.input).signal;
    if (!signal.aborted) throw err;
    const reason = abortReasonOf(signal);
    return reason === "deadline"
      ? { result: { kind: "aborted", reason }, outcome: Outcome.DEADLINE_EXCEEDED, status: deadlineStatus }
      : { result: { kind: "aborted", reason }, outcome: Outcome.CANCELLED, status: cancelledStatus };
  }

}

/** The abort reason of a call whose episode a reset or reload closed. */
const episodeClosed = "episode closed";

interface Ending {
  result: CallResult;
  outcome: Outcome;
  status?: CallStatus | undefined;
  response?: GenerateResponse | undefined;
  streamBreak?: StreamBreak;
}

function frameOf(id: string, model: string, chunk: StreamChunk): GenerateStreamResponse {
  // Complete literals, not create(): this runs once per stream chunk (see render-reply.ts).
  return {
    $typeName: "modelstub.v1.GenerateStreamResponse",
    id,
    model,
    frame:
      chunk.kind === "text"
        ? { case: "textDelta", value: chunk.text }
        : { case: "toolCallDelta", value: { $typeName: "modelstub.v1.ToolCallDelta", index: chunk.index, id: chunk.id, name: chunk.name, arguments: chunk.arguments } },
  };
}

async function runReply(entry: CompiledEntry, rendered: RenderedReply, input: CallInput, x: Execution): Promise<Ending> {
  const action = entry.action as Extract<CompiledEntry["action"], { kind: "reply" }>;
  const { response } = rendered;
  const brk = action.brk;
  const stream = input.method === "stream";
  await x.wait(entry.firstByteMs);
  if (stream || brk || entry.perChunkMs > 0) {
    const { frames, counts } = planFrames(rendered, brk ? brk.afterChunks : -1);
    // `done` counts the script's chunks, whatever frames carry them: the break, the per-chunk
    // waits and chunks_sent speak of chunks, so coalescing changes no recorded byte (save for a
    // call cut off between two chunks of one frame, which records the frames it sent).
    for (let f = 0, done = 0; f <= frames.length; f++) {
      if (brk && done === brk.afterChunks) {
        if (brk.then === "error") return { result: { kind: "status", status: brk.status }, outcome: Outcome.STREAM_BROKEN, status: brk.status, response, streamBreak: StreamBreak.ERROR };
        if (brk.then === "drop") return { result: { kind: "drop" }, outcome: Outcome.STREAM_BROKEN, response, streamBreak: StreamBreak.DROP };
        try {
          await x.hang();
        } catch (err) {
          const ended = x.endingOf(err);
          return { ...ended, outcome: Outcome.STREAM_BROKEN, response, streamBreak: StreamBreak.HANG };
        }
      }
      if (f === frames.length) break;
      const n = counts ? counts[f]! : 1;
      if (entry.perChunkMs > 0) for (let k = done === 0 ? 1 : 0; k < n; k++) await x.wait(entry.perChunkMs);
      // A cut-off call writes nothing more, even when its chunks need no wait.
      if (x.aborted) throw x.signal.reason;
      done += n;
      if (stream) {
        const ready = input.onFrame!(frameOf(response.id, response.model, frames[f]!));
        x.chunksSent += n;
        // Back-pressure: a full transport buffer holds the next frame until it drains.
        if (ready) await x.drained(ready);
      }
    }
  }
  if (stream) {
    // The last frame: nothing follows it, so nothing waits for the buffer to drain. The
    // transport ends the call behind it.
    const ready = input.onFrame!({
      $typeName: "modelstub.v1.GenerateStreamResponse",
      id: response.id,
      model: response.model,
      frame: { case: "final", value: { $typeName: "modelstub.v1.StreamFinal", finishReason: response.finishReason, usage: response.usage } },
    });
    ready?.catch(() => {});
  }
  return { result: { kind: "ok", response }, outcome: Outcome.OK, response };
}

async function execute(entry: CompiledEntry, rendered: RenderedReply | undefined, input: CallInput, x: Execution): Promise<Ending> {
  const action = entry.action;
  switch (action.kind) {
    case "reply":
      return runReply(entry, rendered!, input, x);
    case "error":
      await x.wait(entry.firstByteMs);
      return { result: { kind: "status", status: action.status }, outcome: Outcome.ERROR, status: action.status };
    case "timeout": {
      await x.wait(entry.firstByteMs);
      const status = { code: Code.DEADLINE_EXCEEDED, message: `scripted timeout at ${entry.ref}`, trailers: [] };
      return { result: { kind: "status", status }, outcome: Outcome.TIMED_OUT, status };
    }
    case "hang":
      await x.wait(entry.firstByteMs);
      return x.hang();
  }
}

function internalStatus(err: unknown): CallStatus {
  // Not worth a retry: the same request renders the same reply (the HTTP front says so to SDKs).
  if (err instanceof TemplateTooLargeError) return { code: Code.RESOURCE_EXHAUSTED, message: err.message, trailers: [], retryable: false };
  return { code: Code.INTERNAL, message: `modelstub internal error: ${err instanceof Error ? err.message : String(err)}`, trailers: [] };
}

function statusEnding(status: CallStatus): Ending {
  return { result: { kind: "status", status }, outcome: Outcome.ERROR, status };
}

/** Calls the observers of a finished call; returns what the first one that failed threw. */
function notify(log: CallLog, hooks: readonly (((log: CallLog) => void) | undefined)[]): { error: unknown } | undefined {
  let failed: { error: unknown } | undefined;
  for (const hook of hooks) {
    try {
      hook?.(log);
    } catch (error) {
      failed ??= { error };
    }
  }
  return failed;
}

/**
 * Runs one call in a session: picks the entry, renders the reply, waits the declared
 * latencies on the session's clock, streams frames, and records the call in the episode.
 * Never rejects: every failure ends as a CallResult, a throwing hook included.
 *
 * The call records into the episode that was open when it started, even when a reset or
 * reload closes that episode meanwhile (the reset cuts the call off and waits for it).
 */
export async function runCall(session: Session, clock: Clock, input: CallInput, onCall?: (log: CallLog) => void): Promise<CallResult> {
  const episode = session.episode;
  const sequence = ++episode.sequence;
  const startMs = episode.timelineMs;
  const request = input.request;
  const x = new Execution(clock, input, declaredBudgetMs(input.budgetMs ?? Infinity));
  episode.running.add(x);
  const fromRequest = request.stepId;
  const fromMetadata = input.stepFromMetadata ?? "";
  const stepId = fromRequest || fromMetadata;
  let entryRef = "";
  let ending: Ending;
  try {
    input.onStart?.({ sequence, startMs });
    if (fromRequest && fromMetadata && fromRequest !== fromMetadata) {
      ending = statusEnding({
        code: Code.INVALID_ARGUMENT,
        message: `the request's step_id ${JSON.stringify(fromRequest)} and metadata x-modelstub-step ${JSON.stringify(fromMetadata)} disagree; send one of them`,
        trailers: [],
      });
    } else {
      const view = viewRequest(request);
      const selection = selectEntry(session, stepId, view);
      if ("status" in selection) {
        ending = statusEnding(selection.status);
      } else {
        const { entry } = selection;
        entryRef = entry.ref;
        let rendered: RenderedReply | undefined;
        if (entry.action.kind === "reply") {
          const ctx: TemplateContext = {
            lastUser: view.lastUser,
            lastToolResult: view.lastToolResult,
            step: stepId,
            model: request.model || session.script.defaultModel,
            session: session.name,
            turn: view.turn,
            captures: selection.captures,
          };
          const prefix = `${session.name}-${sequence}`;
          rendered = renderReply(entry.action.reply, ctx, request, { response: `gen-${prefix}`, toolCall: (i) => `call-${prefix}-${i}` });
        }
        ending = await execute(entry, rendered, input, x);
      }
    }
  } catch (err) {
    try {
      ending = x.endingOf(err);
    } catch {
      ending = statusEnding(internalStatus(err));
    }
  }
  x.release();
  const endMs = startMs + x.elapsed;
  if (endMs > episode.timelineMs) episode.timelineMs = endMs;
  const log: CallLog = {
    session: session.name,
    method: input.method,
    step: stepId,
    entry: entryRef,
    sequence,
    outcome: ending.outcome,
    code: ending.status?.code ?? 0,
    declaredMs: x.elapsed,
  };
  // A hook that throws is a bug of whoever passed it; the client learns of it as INTERNAL, and
  // the episode records what the client saw.
  const failedHook = notify(log, [onCall, input.onLog]);
  if (failedHook) ending = statusEnding(internalStatus(failedHook.error));
  try {
    episode.record(sequence, encodeEpisodeCall(record(session, sequence, stepId, entryRef, input, ending, startMs, endMs, x.chunksSent)));
  } catch (err) {
    // Unreachable with well-formed messages; the slot stays empty rather than the call hanging.
    ending = statusEnding(internalStatus(err));
  } finally {
    episode.finish(x);
  }
  return ending.result;
}

function record(
  session: Session,
  sequence: number,
  stepId: string,
  entry: string,
  input: CallInput,
  ending: Ending,
  startMs: number,
  endMs: number,
  chunksSent: number,
): EpisodeCall {
  const s = ending.status;
  // A complete literal, not create(): see render-reply.ts.
  const call: EpisodeCall = {
    $typeName: "modelstub.v1.EpisodeCall",
    sequence: BigInt(sequence),
    session: session.name,
    method: input.method === "stream" ? CallMethod.GENERATE_STREAM : CallMethod.GENERATE,
    stepId,
    entry,
    request: input.request,
    outcome: ending.outcome,
    status: s ? { $typeName: "modelstub.v1.CallStatus", code: s.code, message: s.message, trailers: s.trailers.map(([key, value]) => ({ $typeName: "modelstub.v1.MetadataEntry", key, value })) } : undefined,
    response: ending.response,
    usage: ending.response?.usage,
    chunksSent,
    streamBreak: ending.streamBreak ?? StreamBreak.UNSPECIFIED,
    startMs: BigInt(startMs),
    endMs: BigInt(endMs),
  };
  return call;
}
