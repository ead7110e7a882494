import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { CallStatusSchema, EpisodeSchema, type Episode, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import { GenerateRequestSchema, GenerateResponseSchema, UsageSchema, type GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";

/**
 * Each response's bytes, kept from encoding its episode call for the transport to send as they
 * are: a unary reply is encoded once per call, not once for the episode and again for the wire.
 * Weak: an entry lives as long as the response object does.
 */
const responseBytes = new WeakMap<GenerateResponse, Uint8Array>();

/** The bytes of `response`: those its episode call was recorded with, else encoded now. */
export function encodeResponse(response: GenerateResponse): Uint8Array {
  return responseBytes.get(response) ?? toBinary(GenerateResponseSchema, response);
}

/**
 * Encodes one recorded call. Sessions keep their calls encoded: a few hundred bytes each instead
 * of an object graph holding the whole request, which kept the garbage collector busy (and the
 * p99 latency up) on servers that record hundreds of thousands of calls.
 *
 * Byte for byte what toBinary(EpisodeCallSchema, call) writes (pinned by the golden episode and
 * by test/engine/episode-call-bytes.test.ts): fields in number order, proto3 zero values left
 * out, a set message field written even when empty. Assembled by hand so the response's bytes
 * can be kept for the wire (encodeResponse).
 */
export function encodeEpisodeCall(call: EpisodeCall): Uint8Array {
  const w = new BinaryWriter();
  if (call.sequence !== 0n) w.tag(1, WireType.Varint).uint64(call.sequence);
  if (call.session !== "") w.tag(2, WireType.LengthDelimited).string(call.session);
  if (call.method !== 0) w.tag(3, WireType.Varint).int32(call.method);
  if (call.stepId !== "") w.tag(4, WireType.LengthDelimited).string(call.stepId);
  if (call.entry !== "") w.tag(5, WireType.LengthDelimited).string(call.entry);
  if (call.request) w.tag(6, WireType.LengthDelimited).bytes(toBinary(GenerateRequestSchema, call.request));
  if (call.outcome !== 0) w.tag(7, WireType.Varint).int32(call.outcome);
  if (call.status) w.tag(8, WireType.LengthDelimited).bytes(toBinary(CallStatusSchema, call.status));
  if (call.response) {
    const bytes = encodeResponse(call.response);
    responseBytes.set(call.response, bytes);
    w.tag(9, WireType.LengthDelimited).bytes(bytes);
  }
  if (call.usage) w.tag(10, WireType.LengthDelimited).bytes(toBinary(UsageSchema, call.usage));
  if (call.chunksSent !== 0) w.tag(11, WireType.Varint).uint32(call.chunksSent);
  if (call.streamBreak !== 0) w.tag(12, WireType.Varint).int32(call.streamBreak);
  if (call.startMs !== 0n) w.tag(13, WireType.Varint).uint64(call.startMs);
  if (call.endMs !== 0n) w.tag(14, WireType.Varint).uint64(call.endMs);
  return w.finish();
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
