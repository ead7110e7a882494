import { toBinary } from "@bufbuild/protobuf";
import {
  AppliedFaultSchema,
  CallStatusSchema,
  EmbedRequestSchema,
  EmbedResponseSchema,
  EpisodeCallSchema,
  MetadataEntrySchema,
  type AppliedFault,
  type CallStatus,
  type EpisodeCall,
} from "../../gen/modelstub/v1/episode_pb.js";
import { tagsOf, twoByteTagOf } from "./field-tag.js";
import { delimitedSize, reserveLength, startSizing, startWriting } from "./proto-lengths.js";
import { enumSize, int64Size, listStringSize, stringSize, uint32Size, unknownSize } from "./proto-size.js";
import { writeDelimited, writeEnum, writeInt64, writeListString, writeString, writeUint32, writeUnknown } from "./proto-write.js";
import { sizeRequest, writeRequest } from "./write-request.js";
import { varintSize, writeVarint } from "./varint.js";
import { sizeResponse, sizeUsage, writeResponse, writeUsage } from "./write-response.js";

// Tags (field number << 3 | wire type) by field, from the descriptors at load (field-tag.ts).
const callTags = tagsOf(EpisodeCallSchema.field);
/**
 * Field 16 takes a two-byte tag, (16 << 3) | 2 = 130 as a varint: 0x82 0x01. The writers take a
 * one-byte tag, so the first byte is written here and the second passed as the writer's "tag".
 */
const [SENT_TEXT_CHUNKS_FIRST, SENT_TEXT_CHUNKS_SECOND] = twoByteTagOf(EpisodeCallSchema.field.sentTextChunks);
/** Fields 17 and 18, the embeddings call's request and response, take two-byte tags too. */
const EMBED_REQUEST_TAG = twoByteTagOf(EpisodeCallSchema.field.embedRequest);
const EMBED_RESPONSE_TAG = twoByteTagOf(EpisodeCallSchema.field.embedResponse);
const faultTags = tagsOf(AppliedFaultSchema.field);
const statusTags = tagsOf(CallStatusSchema.field);
const entryTags = tagsOf(MetadataEntrySchema.field);

function sizeStatus(s: CallStatus): number {
  let n = uint32Size(s.code) + stringSize(s.message);
  for (let i = 0; i < s.trailers.length; i++) {
    const t = s.trailers[i]!;
    // The slot is reserved (first argument) before the entry's string lengths are recorded.
    n += delimitedSize(reserveLength(), stringSize(t.key) + stringSize(t.value) + unknownSize(t.$unknown));
  }
  return n + unknownSize(s.$unknown);
}

function writeStatus(buf: Buffer, at: number, s: CallStatus): number {
  at = writeUint32(buf, at, statusTags.code, s.code);
  at = writeString(buf, at, statusTags.message, s.message);
  for (let i = 0; i < s.trailers.length; i++) {
    const t = s.trailers[i]!;
    at = writeString(buf, writeDelimited(buf, at, statusTags.trailers), entryTags.key, t.key);
    at = writeUnknown(buf, writeString(buf, at, entryTags.value, t.value), t.$unknown);
  }
  return writeUnknown(buf, at, s.$unknown);
}

function sizeFault(f: AppliedFault): number {
  return stringSize(f.rule) + enumSize(f.kind) + uint32Size(f.roll) + unknownSize(f.$unknown);
}

function writeFault(buf: Buffer, at: number, f: AppliedFault): number {
  at = writeString(buf, at, faultTags.rule, f.rule);
  at = writeEnum(buf, at, faultTags.kind, f.kind);
  at = writeUint32(buf, at, faultTags.roll, f.roll);
  return writeUnknown(buf, at, f.$unknown);
}

/**
 * The embeddings call's request and response (fields 17 and 18), encoded through toBinary: an
 * embeddings call is rare next to model calls, and its vectors are packed floats, not the hot
 * path's strings. Undefined for a field that is unset (every model call's).
 */
interface EmbedBytes {
  request: Uint8Array | undefined;
  response: Uint8Array | undefined;
}

/** A two-byte tag, the length and the bytes of a message encoded beforehand. */
function preEncodedSize(bytes: Uint8Array | undefined): number {
  return bytes === undefined ? 0 : 2 + varintSize(bytes.length) + bytes.length;
}

function writePreEncoded(buf: Buffer, at: number, tag: readonly [number, number], bytes: Uint8Array | undefined): number {
  if (bytes === undefined) return at;
  buf[at++] = tag[0];
  buf[at++] = tag[1];
  at = writeVarint(buf, at, bytes.length);
  buf.set(bytes, at);
  return at + bytes.length;
}

/** The sizing pass of an EpisodeCall: fields in number order, as writeEpisodeCall visits them. */
function sizeEpisodeCall(c: EpisodeCall, embed: EmbedBytes): number {
  let n = int64Size(c.sequence, false) + stringSize(c.session) + enumSize(c.method) + stringSize(c.stepId) + stringSize(c.entry);
  if (c.request !== undefined) n += delimitedSize(reserveLength(), sizeRequest(c.request));
  n += enumSize(c.outcome);
  if (c.status !== undefined) n += delimitedSize(reserveLength(), sizeStatus(c.status));
  if (c.response !== undefined) n += delimitedSize(reserveLength(), sizeResponse(c.response));
  if (c.usage !== undefined) n += delimitedSize(reserveLength(), sizeUsage(c.usage));
  n += uint32Size(c.chunksSent) + enumSize(c.streamBreak) + int64Size(c.startMs, false) + int64Size(c.endMs, false);
  if (c.fault !== undefined) n += delimitedSize(reserveLength(), sizeFault(c.fault));
  for (let i = 0; i < c.sentTextChunks.length; i++) n += 1 + listStringSize(c.sentTextChunks[i]!);
  n += preEncodedSize(embed.request) + preEncodedSize(embed.response);
  return n + unknownSize(c.$unknown);
}

/** An encoded EpisodeCall, and the bytes of its response field's message within it. */
export interface WrittenEpisodeCall {
  bytes: Uint8Array;
  /** A view of `bytes`: exactly toBinary(GenerateResponseSchema, call.response); undefined without one. */
  response: Uint8Array | undefined;
}

/**
 * Encodes `c` byte for byte as toBinary(EpisodeCallSchema, c) with default options (unknown
 * fields written after known ones), sizing it first and writing it into one buffer from `alloc`
 * (a journal's ByteArena; by default a buffer of its own). Not from Node's shared pool: sessions
 * keep their calls for long, and a pooled slice would keep its whole 8 KiB slab alive with it.
 */
export function writeEpisodeCall(c: EpisodeCall, alloc: (size: number) => Buffer = Buffer.allocUnsafeSlow): WrittenEpisodeCall {
  const embed: EmbedBytes = {
    request: c.embedRequest && toBinary(EmbedRequestSchema, c.embedRequest),
    response: c.embedResponse && toBinary(EmbedResponseSchema, c.embedResponse),
  };
  startSizing();
  const buf = alloc(sizeEpisodeCall(c, embed));
  startWriting();
  let at = writeInt64(buf, 0, callTags.sequence, c.sequence, false);
  at = writeString(buf, at, callTags.session, c.session);
  at = writeEnum(buf, at, callTags.method, c.method);
  at = writeString(buf, at, callTags.stepId, c.stepId);
  at = writeString(buf, at, callTags.entry, c.entry);
  if (c.request !== undefined) at = writeRequest(buf, writeDelimited(buf, at, callTags.request), c.request);
  at = writeEnum(buf, at, callTags.outcome, c.outcome);
  if (c.status !== undefined) at = writeStatus(buf, writeDelimited(buf, at, callTags.status), c.status);
  let response: Uint8Array | undefined;
  if (c.response !== undefined) {
    const start = writeDelimited(buf, at, callTags.response);
    at = writeResponse(buf, start, c.response);
    response = buf.subarray(start, at);
  }
  if (c.usage !== undefined) at = writeUsage(buf, writeDelimited(buf, at, callTags.usage), c.usage);
  at = writeUint32(buf, at, callTags.chunksSent, c.chunksSent);
  at = writeEnum(buf, at, callTags.streamBreak, c.streamBreak);
  at = writeInt64(buf, at, callTags.startMs, c.startMs, false);
  at = writeInt64(buf, at, callTags.endMs, c.endMs, false);
  if (c.fault !== undefined) at = writeFault(buf, writeDelimited(buf, at, callTags.fault), c.fault);
  for (let i = 0; i < c.sentTextChunks.length; i++) {
    buf[at++] = SENT_TEXT_CHUNKS_FIRST;
    at = writeListString(buf, at, SENT_TEXT_CHUNKS_SECOND, c.sentTextChunks[i]!);
  }
  at = writePreEncoded(buf, at, EMBED_REQUEST_TAG, embed.request);
  at = writePreEncoded(buf, at, EMBED_RESPONSE_TAG, embed.response);
  writeUnknown(buf, at, c.$unknown);
  return { bytes: buf, response };
}
