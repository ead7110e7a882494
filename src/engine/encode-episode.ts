import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { EpisodeCallSchema, EpisodeSchema, type Episode, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";

/**
 * Encodes one recorded call. Sessions keep their calls encoded: a few hundred bytes each instead
 * of an object graph holding the whole request, which kept the garbage collector busy (and the
 * p99 latency up) on servers that record hundreds of thousands of calls.
 */
export function encodeEpisodeCall(call: EpisodeCall): Uint8Array {
  return toBinary(EpisodeCallSchema, call);
}

/**
 * The deterministic bytes of an Episode, assembled from encoded calls. Byte for byte what
 * toBinary(EpisodeSchema, episode) writes: field 1 (session, left out when empty), then each
 * call as field 2, length-delimited, in order. The determinism tests pin this against the
 * golden file, which was written through toBinary of the whole message.
 */
export function encodeEpisode(session: string, calls: readonly Uint8Array[]): Uint8Array {
  const w = new BinaryWriter();
  if (session !== "") w.tag(1, WireType.LengthDelimited).string(session);
  for (const c of calls) w.tag(2, WireType.LengthDelimited).bytes(c);
  return w.finish();
}

/** The Episode message of encoded calls. */
export function decodeEpisode(session: string, calls: readonly Uint8Array[]): Episode {
  return fromBinary(EpisodeSchema, encodeEpisode(session, calls));
}
