import { CallMethod, Outcome, StreamBreak, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallInput } from "./call-input.js";
import type { CallLog } from "./call-log.js";
import type { CallResult } from "./call-result.js";
import { encodeEpisodeCall } from "./encode-episode.js";
import { declaredBudgetMs, type Clock } from "./clock.js";
import type { CompiledEntry, RequestView, TemplateContext } from "../script/compiled-script.js";
import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import type { ChosenFault } from "./choose-fault.js";
import { runFault } from "./run-fault.js";
import { internalStatus, redroppedEnding, statusEnding, type Ending } from "./ending.js";
import { Execution } from "./execution.js";
import { renderReply, type RenderedReply } from "./render-reply.js";
import { viewRequest } from "./request-view.js";
import { executeEntry } from "./execute-entry.js";
import { callIdsOf } from "../shared/call-ids.js";
import { derivedSentText } from "../shared/derived-chunking.js";
import { chunkEnd } from "../shared/split-chunks.js";
import { selectEntry } from "./select-entry.js";
import type { Session } from "./session.js";
import { Code } from "../shared/status-code.js";

/** Renders an entry's reply for this call (undefined for an entry that does not reply). */
function renderEntry(
  session: Session,
  stepId: string,
  sequence: number,
  request: GenerateRequest,
  view: RequestView,
  entry: CompiledEntry,
  captures: RegExpExecArray | null,
): RenderedReply | undefined {
  if (entry.action.kind !== "reply") return undefined;
  const ctx: TemplateContext = {
    lastUser: view.lastUser,
    lastToolResult: view.lastToolResult,
    step: stepId,
    model: request.model || session.script.defaultModel,
    session: session.name,
    turn: view.turn,
    captures,
  };
  return renderReply(entry.action.reply, ctx, request, callIdsOf(session.name, sequence));
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
  let entryName: string | undefined;
  let lastUser = "";
  let fault: ChosenFault | undefined;
  let ending: Ending;
  try {
    input.onStart?.({ sequence, startMs, episode: episode.id });
    if (fromRequest && fromMetadata && fromRequest !== fromMetadata) {
      ending = statusEnding({
        code: Code.INVALID_ARGUMENT,
        message: `the request's step_id ${JSON.stringify(fromRequest)} and metadata x-modelstub-step ${JSON.stringify(fromMetadata)} disagree; send one of them`,
        trailers: [],
      });
    } else {
      const view = viewRequest(request, session.script);
      lastUser = view.lastUser;
      fault = episode.faults?.choose(session.name, sequence, stepId, input.method, view);
      if (fault !== undefined) {
        const select = (consume: boolean) => selectEntry(session, stepId, view, consume);
        const render = (entry: CompiledEntry, captures: RegExpExecArray | null) => renderEntry(session, stepId, sequence, request, view, entry, captures);
        ending = await runFault(
          fault,
          select,
          render,
          (e) => {
            entryRef = e.ref;
            entryName = e.name;
          },
          input,
          x,
        );
      } else {
        const selection = selectEntry(session, stepId, view);
        if ("status" in selection) {
          const miss = selection.status;
          const unanswered = miss.code === Code.NOT_FOUND || miss.code === Code.FAILED_PRECONDITION;
          ending = input.retryOfDrop && unanswered ? redroppedEnding(miss) : statusEnding(miss);
        } else {
          const { entry } = selection;
          entryRef = entry.ref;
          entryName = entry.name;
          ending = await executeEntry(entry, renderEntry(session, stepId, sequence, request, view, entry, selection.captures), input, x);
        }
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
    entryName,
    model: request.model,
    lastUser,
    sequence,
    outcome: ending.outcome,
    code: ending.status?.code ?? 0,
    declaredMs: x.elapsed,
    message: ending.status?.message,
  };
  // A hook that throws is a bug of whoever passed it; the client learns of it as INTERNAL, and
  // the episode records what the client saw.
  const failedHook = notify(log, [onCall, input.onLog]);
  if (failedHook) ending = statusEnding(internalStatus(failedHook.error));
  try {
    episode.record(sequence, encodeEpisodeCall(record(session, sequence, stepId, entryRef, input, ending, startMs, endMs, x.chunksSent, fault, x.streamed), episode.arena.alloc));
  } catch (err) {
    // Unreachable with well-formed messages; the slot stays empty rather than the call hanging.
    ending = statusEnding(internalStatus(err));
  } finally {
    episode.finish(x);
  }
  return ending.result;
}

/**
 * The text chunks a stream that ended before its reply did was sent, for the episode, where a
 * script written from the episode could not tell them (derivedSentText: the words rule cutting
 * the reply to chunks_sent): a break after chunks the words rule does not make, a stream the
 * caller cut off. Empty for the rest, so episodes of streams that end whole keep their bytes.
 */
function sentTextChunksOf(streamed: RenderedReply | undefined, chunksSent: number, ending: Ending): string[] {
  // Past maxSentTextChunks the episode keeps the count only (from-episode then cannot replay the
  // chunks exactly, and says so): 64 stalled readers of a 1 MB echo, let go at once, had sent
  // 100,000 chunks each into their sockets' buffers, and recording them held the loop 0.5-0.9 s.
  if (!streamed || chunksSent === 0 || chunksSent > maxSentTextChunks || ending.outcome === Outcome.OK) return [];
  const sent = textChunksBefore(streamed, chunksSent);
  if (ending.outcome === Outcome.STREAM_BROKEN && ending.response) {
    const message = ending.response.message;
    const derived = derivedSentText(message?.content ?? "", (message?.toolCalls ?? []).map((t) => t.arguments), chunksSent);
    if (derived && derived.length === sent.length && derived.every((d, i) => d === sent[i])) return [];
  }
  return sent;
}

/**
 * The text chunks among a stream's first `n` chunks (text chunks come before tool calls'), cut
 * in place: a stream cut off early in a 1 MB echo sent a few thousand of its 200,000 chunks, and
 * making them all (streamed.chunks()) for every cut-off call held the loop for seconds when 64
 * stalled readers were let go at once.
 */
/** The most text chunks an episode records of a stream that ended before its reply did: the most frames a stream sends. */
const maxSentTextChunks = 4096;

function textChunksBefore(streamed: RenderedReply, n: number): string[] {
  if (streamed.textChunks) return streamed.textChunks.slice(0, n);
  const text = streamed.response.message?.content ?? "";
  const out: string[] = [];
  for (let at = 0; out.length < n && at < text.length; ) {
    const end = chunkEnd(text, streamed.chunking, at);
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
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
  fault: ChosenFault | undefined,
  streamed: RenderedReply | undefined,
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
    fault: fault && { $typeName: "modelstub.v1.AppliedFault", rule: fault.rule, kind: fault.fault.kind, roll: fault.roll },
    sentTextChunks: sentTextChunksOf(streamed, chunksSent, ending),
  };
  return call;
}
