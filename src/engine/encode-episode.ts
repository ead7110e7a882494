import { create, fromBinary } from "@bufbuild/protobuf";
import { EpisodeCallSchema, EpisodeSchema, FaultPlanInfoSchema, type Episode, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import type { GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import { writeEpisodeCall } from "../wire/write-episode-call.js";
import { encodeResponseAlone } from "../wire/write-response.js";
import { copySliceBytes, episodePieces, joinPiecesNow, type PlanIdentity } from "./episode-pieces.js";

/**
 * Each response's bytes, kept from encoding its episode call for the transport to send as they
 * are: a unary reply is encoded once per call, not once for the episode and again for the wire.
 * Weak: an entry lives as long as the response object does.
 */
const responseBytes = new WeakMap<GenerateResponse, Uint8Array>();

/** The bytes of `response`: those its episode call was recorded with, else encoded now. */
export function encodeResponse(response: GenerateResponse): Uint8Array {
  return responseBytes.get(response) ?? encodeResponseAlone(response);
}

/**
 * Encodes one recorded call. Sessions keep their calls encoded: a few hundred bytes each instead
 * of an object graph holding the whole request, which kept the garbage collector busy (and the
 * p99 latency up) on servers that record hundreds of thousands of calls.
 *
 * Byte for byte what toBinary(EpisodeCallSchema, call) writes (pinned by the golden episode and
 * by test/engine/episode-call-bytes.test.ts): fields in number order, proto3 zero values left
 * out, a set message field written even when empty, unknown fields last. Written by hand, sized
 * first, into one buffer (wire/write-episode-call.ts): encoding through toBinary's reflection was a
 * third of an in-process call's cost. The response's bytes are kept, a view of the call's, for
 * the wire (encodeResponse). `alloc` gives the buffer: the journal's arena (byte-arena.ts).
 */
export function encodeEpisodeCall(call: EpisodeCall, alloc?: (size: number) => Buffer): Uint8Array {
  const written = writeEpisodeCall(call, alloc);
  if (call.response !== undefined) responseBytes.set(call.response, written.response!);
  return written.bytes;
}

export type { PlanIdentity } from "./episode-pieces.js";

/**
 * The deterministic bytes of an Episode, assembled from encoded calls. Byte for byte what
 * toBinary(EpisodeSchema, episode) writes: field 1 (session, left out when empty), then each
 * call as field 2, length-delimited, in order, then the fault plan (field 3) when there is one.
 * The determinism tests pin this against the golden file, which was written through toBinary
 * of the whole message, and test/engine/episode-call-bytes.test.ts pins the plan's field.
 *
 * Sized first, then copied into one buffer (episode-pieces.ts): BinaryWriter's growing buffer
 * and final join held the loop 250-400 ms for a 64 MiB episode. At once: a control call on a
 * large episode copies its pieces a slice per turn instead (joinPieces, sliceChunks).
 */
export function encodeEpisode(session: string, calls: readonly Uint8Array[], plan?: PlanIdentity): Uint8Array {
  const { pieces, size } = episodePieces(session, calls, plan);
  return joinPiecesNow(pieces, size);
}

/**
 * The Episode message of encoded calls, decoded a call at a time with a turn of the loop between
 * slices of them: what decodeEpisode gives, without holding the loop for all of a large episode
 * at once (a closed episode going to --record-dir).
 */
export async function decodeEpisodeInSlices(session: string, calls: readonly Uint8Array[], plan?: PlanIdentity): Promise<Episode> {
  const decoded: EpisodeCall[] = [];
  let sinceYield = 0;
  for (const c of calls) {
    decoded.push(fromBinary(EpisodeCallSchema, c));
    sinceYield += c.length;
    if (sinceYield >= copySliceBytes) {
      sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  const faultPlan = plan && create(FaultPlanInfoSchema, { name: plan.name, digest: plan.digest, ...(plan.seed === undefined ? {} : { chaosSeed: plan.seed }) });
  return create(EpisodeSchema, { session, calls: decoded, ...(faultPlan ? { faultPlan } : {}) });
}

/** The Episode message of encoded calls. */
export function decodeEpisode(session: string, calls: readonly Uint8Array[], plan?: PlanIdentity): Episode {
  return fromBinary(EpisodeSchema, encodeEpisode(session, calls, plan));
}
