import { CallMethod, Outcome, StreamBreak, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallInput } from "./call-input.js";
import type { CallLog } from "./call-log.js";
import type { CallResult } from "./call-result.js";
import { encodeEpisodeCall } from "./encode-episode.js";
import type { Clock } from "./clock.js";
import type { ReplayMode, RequestView } from "../script/compiled-script.js";
import { runFault } from "./run-fault.js";
import { internalStatus, redroppedEnding, statusEnding, type Ending } from "./ending.js";
import type { Execution } from "./execution.js";
import type { RenderedReply } from "./render-reply.js";
import { viewRequest } from "./request-view.js";
import { runEntry } from "./run-entry.js";
import { derivedSentText } from "../shared/derived-chunking.js";
import { chunkEnd } from "../shared/split-chunks.js";
import type { Session } from "./session.js";
import { Code } from "../shared/status-code.js";
import type { CallEvent } from "./call-event.js";
import { CallContext } from "./call-context.js";
import { heavyRequestBytes, heavyTurn, messageChars } from "../shared/heavy-turns.js";

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
export async function runCall(
  session: Session,
  clock: Clock,
  input: CallInput,
  onCall?: (log: CallLog) => void,
  onEvent?: (event: CallEvent) => void,
  replayMode?: ReplayMode,
): Promise<CallResult> {
  const c = new CallContext(session, clock, input, replayMode);
  const ran = await endingOf(c, onEvent);
  const endMs = c.end();
  // Recording a call of MBs (its request and reply encoded into the episode) takes about a ms
  // per MB: 64 stalled readers of a 960 KB echo, let go at once, all ended in one turn of the
  // loop and held it 40-80 ms recording. Such a call is recorded on its own heavy turn, as it was
  // read and run; the episode's bytes are the same (a call's slot is its sequence, its times
  // the declared clock's), and its client is answered after the record, as before.
  if (recordedChars(c.input.request, ran) >= heavyRequestBytes) await heavyTurn();
  const ending = recordCall(c, ran, endMs, onCall);
  onEvent?.({ ...c.event("ended"), endMs, outcome: ending.outcome, code: ending.status?.code ?? 0, entry: c.entryRef });
  return ending.result;
}

/** Runs the call to its ending: a fault's, the script's, or how it was cut off. Never throws. */
async function endingOf(c: CallContext, onEvent: ((event: CallEvent) => void) | undefined): Promise<Ending> {
  try {
    c.input.onStart?.({ sequence: c.sequence, startMs: c.startMs, episode: c.episode.id });
    const fromRequest = c.request.stepId;
    const fromMetadata = c.input.stepFromMetadata ?? "";
    if (fromRequest && fromMetadata && fromRequest !== fromMetadata) {
      onEvent?.(c.event("started"));
      return statusEnding({
        code: Code.INVALID_ARGUMENT,
        message: `the request's step_id ${JSON.stringify(fromRequest)} and metadata x-modelstub-step ${JSON.stringify(fromMetadata)} disagree; send one of them`,
        trailers: [],
      });
    }
    const view = viewRequest(c.request, c.session.script);
    c.lastUser = view.lastUser;
    c.fault = c.episode.faults?.choose(c.session.name, c.sequence, c.stepId, c.input.method, view);
    c.countCall();
    onEvent?.(c.event("started"));
    return await (c.fault !== undefined ? runFault(c, view, c.fault) : answerFromScript(c, view));
  } catch (err) {
    return endingOfThrow(c.x, err);
  }
}

/** The script's answer: the entry selected (used up), run; a miss ends with its status. */
function answerFromScript(c: CallContext, view: RequestView): Promise<Ending> | Ending {
  const selection = c.select(view, true);
  if ("status" in selection) {
    const miss = selection.status;
    const unanswered = miss.code === Code.NOT_FOUND || miss.code === Code.FAILED_PRECONDITION;
    return c.input.retryOfDrop && unanswered ? redroppedEnding(miss) : statusEnding(miss);
  }
  const { entry } = selection;
  c.answeredBy(entry);
  return runEntry(entry, c.render(view, entry, selection.captures), c.input, c.x);
}

/** How a call that threw ends: cut off (the Execution says how), else INTERNAL. */
function endingOfThrow(x: Execution, err: unknown): Ending {
  try {
    return x.endingOf(err);
  } catch {
    return statusEnding(internalStatus(err));
  }
}

/** Characters of text a call's record carries: its request's messages, and its reply's text and tool arguments. */
function recordedChars(request: CallInput["request"], ran: Ending): number {
  const reply = ran.response?.message;
  return messageChars(request) + (reply ? messageChars({ messages: [reply] }) : 0);
}

/**
 * Tells the call's observers, then records the call in its episode; the ending the client
 * gets. A hook that throws is a bug of whoever passed it; the client learns of it as INTERNAL,
 * and the episode records what the client saw.
 */
function recordCall(c: CallContext, ran: Ending, endMs: number, onCall: ((log: CallLog) => void) | undefined): Ending {
  let ending = ran;
  const failedHook = notify(callLogOf(c, ending), [onCall, c.input.onLog]);
  if (failedHook) ending = statusEnding(internalStatus(failedHook.error));
  try {
    c.episode.record(c.sequence, encodeEpisodeCall(episodeCallOf(c, ending, endMs), c.episode.arena.alloc));
  } catch (err) {
    // Unreachable with well-formed messages; the slot stays empty rather than the call hanging.
    ending = statusEnding(internalStatus(err));
  } finally {
    c.episode.finish(c.x);
  }
  return ending;
}

/** The call as the log and the observers see it. */
function callLogOf(c: CallContext, ending: Ending): CallLog {
  return {
    session: c.session.name,
    method: c.input.method,
    step: c.stepId,
    entry: c.entryRef,
    entryName: c.entryName,
    model: c.request.model,
    lastUser: c.lastUser,
    sequence: c.sequence,
    outcome: ending.outcome,
    code: ending.status?.code ?? 0,
    declaredMs: c.x.elapsed,
    message: ending.status?.message,
  };
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
    const derived = derivedSentText(
      message?.content ?? "",
      (message?.toolCalls ?? []).map((t) => t.arguments),
      chunksSent,
    );
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

/** The call as its episode records it. */
function episodeCallOf(c: CallContext, ending: Ending, endMs: number): EpisodeCall {
  const s = ending.status;
  const { fault, x } = c;
  // A complete literal, not create(): see render-reply.ts.
  const call: EpisodeCall = {
    $typeName: "modelstub.v1.EpisodeCall",
    sequence: BigInt(c.sequence),
    session: c.session.name,
    method: c.input.method === "stream" ? CallMethod.GENERATE_STREAM : CallMethod.GENERATE,
    stepId: c.stepId,
    entry: c.entryRef,
    request: c.input.request,
    outcome: ending.outcome,
    status: s
      ? {
          $typeName: "modelstub.v1.CallStatus",
          code: s.code,
          message: s.message,
          trailers: s.trailers.map(([key, value]) => ({ $typeName: "modelstub.v1.MetadataEntry", key, value })),
        }
      : undefined,
    response: ending.response,
    usage: ending.response?.usage,
    chunksSent: x.chunksSent,
    streamBreak: ending.streamBreak ?? StreamBreak.UNSPECIFIED,
    startMs: BigInt(c.startMs),
    endMs: BigInt(endMs),
    fault: fault && { $typeName: "modelstub.v1.AppliedFault", rule: fault.rule, kind: fault.fault.kind, roll: fault.roll },
    sentTextChunks: sentTextChunksOf(x.streamed, x.chunksSent, ending),
  };
  return call;
}
