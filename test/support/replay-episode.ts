import { CallMethod, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import type { GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { CallResult } from "../../src/engine/call-result.js";
import type { Stub } from "../../src/engine/stub.js";

/** What one replayed call returned: its result, and its stream frames. */
export interface ReplayedCall {
  result: CallResult;
  frames: GenerateStreamResponse[];
}

/**
 * Sends an episode's requests to a stub again, one after another, in `session` (default: the
 * episode's): the same method, request and step per call. `budgetMs` gives the deadline of
 * calls by sequence number (the episode does not record deadlines; a call the caller's deadline
 * cut off needs the same deadline again).
 */
export async function replayEpisode(stub: Stub, episode: Episode, budgetMs: Record<number, number> = {}, session = episode.session): Promise<ReplayedCall[]> {
  const out: ReplayedCall[] = [];
  for (const call of episode.calls) {
    const frames: GenerateStreamResponse[] = [];
    const stream = call.method === CallMethod.GENERATE_STREAM;
    const result = await stub.call({
      session,
      method: stream ? "stream" : "generate",
      request: call.request!,
      signal: new AbortController().signal,
      budgetMs: budgetMs[Number(call.sequence)] ?? Infinity,
      onFrame: stream ? (f) => void frames.push(f) : undefined,
    });
    out.push({ result, frames });
  }
  return out;
}
