import { CallMethod, Outcome, StreamBreak, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallInput } from "./call-input.js";
import type { CallLog } from "./call-log.js";
import type { CallResult } from "./call-result.js";
import { encodeEpisodeCall } from "./encode-episode.js";
import { declaredBudgetMs, type Clock } from "./clock.js";
import type { CompiledEntry, TemplateContext } from "../script/compiled-script.js";
import { internalStatus, statusEnding, type Ending } from "./ending.js";
import { Execution } from "./execution.js";
import { renderReply, type RenderedReply } from "./render-reply.js";
import { viewRequest } from "./request-view.js";
import { runReply } from "./run-reply.js";
import { selectEntry } from "./select-entry.js";
import type { Session } from "./session.js";
import { Code } from "../shared/status-code.js";

/** Runs the entry's action: a reply (run-reply.ts), or a scripted error, timeout or hang after its first-byte wait. */
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
    episode.record(sequence, encodeEpisodeCall(record(session, sequence, stepId, entryRef, input, ending, startMs, endMs, x.chunksSent), episode.arena.alloc));
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
