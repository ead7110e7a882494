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
import type { Clock } from "./clock.js";
import type { CallStatus, CompiledEntry } from "./compile-script.js";
import { renderReply, type RenderedReply, type StreamChunk } from "./render-reply.js";
import { viewRequest } from "./request-view.js";
import { selectEntry } from "./select-entry.js";
import type { Session } from "./session.js";
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
  /** Receives stream frames (stream calls only). */
  onFrame?: ((frame: GenerateStreamResponse) => void) | undefined;
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

/** Thrown inside a call when, under the virtual clock, a declared wait passes the deadline. */
const virtualDeadline = Symbol("virtual deadline");

class Execution {
  elapsed = 0;
  chunksSent = 0;
  constructor(
    private clock: Clock,
    private input: CallInput,
    private budget: number,
  ) {}

  get signal(): AbortSignal {
    return this.input.signal;
  }

  async wait(ms: number): Promise<void> {
    if (ms === 0) return;
    if (this.clock.kind === "virtual" && this.elapsed + ms > this.budget) throw virtualDeadline;
    await this.clock.sleep(ms, this.signal);
    // Declared, not measured: the timeline advances by what the script said.
    this.elapsed += ms;
  }

  hang(): Promise<never> {
    if (this.clock.kind === "virtual" && Number.isFinite(this.budget)) return Promise.reject(virtualDeadline);
    return waitForAbort(this.signal);
  }
}

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
    const chunks = rendered.chunks();
    for (let i = 0; i <= chunks.length; i++) {
      if (brk && i === brk.afterChunks) {
        if (brk.then === "error") return { result: { kind: "status", status: brk.status }, outcome: Outcome.STREAM_BROKEN, status: brk.status, response, streamBreak: StreamBreak.ERROR };
        if (brk.then === "drop") return { result: { kind: "drop" }, outcome: Outcome.STREAM_BROKEN, response, streamBreak: StreamBreak.DROP };
        try {
          await x.hang();
        } catch (err) {
          const ended = endingOfAbort(err, x.signal);
          return { ...ended, outcome: Outcome.STREAM_BROKEN, response, streamBreak: StreamBreak.HANG };
        }
      }
      if (i === chunks.length) break;
      if (i > 0) await x.wait(entry.perChunkMs);
      // A cut-off call writes nothing more, even when its chunks need no wait.
      if (x.signal.aborted) throw x.signal.reason;
      if (stream) {
        input.onFrame!(frameOf(response.id, response.model, chunks[i]!));
        x.chunksSent++;
      }
    }
  }
  if (stream) {
    input.onFrame!({
      $typeName: "modelstub.v1.GenerateStreamResponse",
      id: response.id,
      model: response.model,
      frame: { case: "final", value: { $typeName: "modelstub.v1.StreamFinal", finishReason: response.finishReason, usage: response.usage } },
    });
  }
  return { result: { kind: "ok", response }, outcome: Outcome.OK, response };
}

function endingOfAbort(err: unknown, signal: AbortSignal): Ending {
  if (err === virtualDeadline) return { result: { kind: "status", status: deadlineStatus }, outcome: Outcome.DEADLINE_EXCEEDED, status: deadlineStatus };
  if (!signal.aborted) throw err;
  const reason = abortReasonOf(signal);
  return reason === "deadline"
    ? { result: { kind: "aborted", reason }, outcome: Outcome.DEADLINE_EXCEEDED, status: deadlineStatus }
    : { result: { kind: "aborted", reason }, outcome: Outcome.CANCELLED, status: cancelledStatus };
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
  if (err instanceof TemplateTooLargeError) return { code: Code.RESOURCE_EXHAUSTED, message: err.message, trailers: [] };
  return { code: Code.INTERNAL, message: `modelstub internal error: ${err instanceof Error ? err.message : String(err)}`, trailers: [] };
}

function statusEnding(status: CallStatus): Ending {
  return { result: { kind: "status", status }, outcome: Outcome.ERROR, status };
}

/**
 * Runs one call in a session: picks the entry, renders the reply, waits the declared
 * latencies on the session's clock, streams frames, and records the call in the episode.
 * Never rejects: every failure ends as a CallResult.
 */
export async function runCall(session: Session, clock: Clock, input: CallInput, onCall?: (log: CallLog) => void): Promise<CallResult> {
  const sequence = ++session.sequence;
  const startMs = session.timelineMs;
  input.onStart?.({ sequence, startMs });
  const request = input.request;
  const x = new Execution(clock, input, input.budgetMs ?? Infinity);
  const fromRequest = request.stepId;
  const fromMetadata = input.stepFromMetadata ?? "";
  const stepId = fromRequest || fromMetadata;
  let entryRef = "";
  let ending: Ending;
  try {
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
      ending = endingOfAbort(err, input.signal);
    } catch {
      ending = statusEnding(internalStatus(err));
    }
  }
  const endMs = startMs + x.elapsed;
  if (endMs > session.timelineMs) session.timelineMs = endMs;
  session.calls[sequence - 1] = encodeEpisodeCall(record(session, sequence, stepId, entryRef, input, ending, startMs, endMs, x.chunksSent));
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
  onCall?.(log);
  input.onLog?.(log);
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
