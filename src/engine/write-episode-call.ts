import type { AppliedFault, CallStatus, EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import { delimitedSize, reserveLength, startSizing, startWriting } from "./proto-lengths.js";
import { enumSize, int64Size, listStringSize, stringSize, uint32Size, unknownSize } from "./proto-size.js";
import { writeDelimited, writeEnum, writeInt64, writeListString, writeString, writeUint32, writeUnknown } from "./proto-write.js";
import { sizeRequest, writeRequest } from "./write-request.js";
import { sizeResponse, sizeUsage, writeResponse, writeUsage } from "./write-response.js";

// Tags: field number << 3 | wire type (0 varint, 2 length-delimited).
const SEQUENCE = (1 << 3) | 0;
const SESSION = (2 << 3) | 2;
const METHOD = (3 << 3) | 0;
const STEP_ID = (4 << 3) | 2;
const ENTRY = (5 << 3) | 2;
const REQUEST = (6 << 3) | 2;
const OUTCOME = (7 << 3) | 0;
const STATUS = (8 << 3) | 2;
const RESPONSE = (9 << 3) | 2;
const USAGE = (10 << 3) | 2;
const CHUNKS_SENT = (11 << 3) | 0;
const STREAM_BREAK = (12 << 3) | 0;
const START_MS = (13 << 3) | 0;
const END_MS = (14 << 3) | 0;
const FAULT = (15 << 3) | 2;
/**
 * Field 16 takes a two-byte tag, (16 << 3) | 2 = 130 as a varint: 0x82 0x01. The writers take a
 * one-byte tag, so the first byte is written here and the second passed as the writer's "tag".
 */
const SENT_TEXT_CHUNKS_FIRST = 0x82;
const SENT_TEXT_CHUNKS_SECOND = 0x01;
const RULE = (1 << 3) | 2;
const KIND = (2 << 3) | 0;
const ROLL = (3 << 3) | 0;
const CODE = (1 << 3) | 0;
const MESSAGE = (2 << 3) | 2;
const TRAILERS = (3 << 3) | 2;
const KEY = (1 << 3) | 2;
const VALUE = (2 << 3) | 2;

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
  at = writeUint32(buf, at, CODE, s.code);
  at = writeString(buf, at, MESSAGE, s.message);
  for (let i = 0; i < s.trailers.length; i++) {
    const t = s.trailers[i]!;
    at = writeString(buf, writeDelimited(buf, at, TRAILERS), KEY, t.key);
    at = writeUnknown(buf, writeString(buf, at, VALUE, t.value), t.$unknown);
  }
  return writeUnknown(buf, at, s.$unknown);
}

function sizeFault(f: AppliedFault): number {
  return stringSize(f.rule) + enumSize(f.kind) + uint32Size(f.roll) + unknownSize(f.$unknown);
}

function writeFault(buf: Buffer, at: number, f: AppliedFault): number {
  at = writeString(buf, at, RULE, f.rule);
  at = writeEnum(buf, at, KIND, f.kind);
  at = writeUint32(buf, at, ROLL, f.roll);
  return writeUnknown(buf, at, f.$unknown);
}

/** The sizing pass of an EpisodeCall: fields in number order, as writeEpisodeCall visits them. */
function sizeEpisodeCall(c: EpisodeCall): number {
  let n = int64Size(c.sequence, false) + stringSize(c.session) + enumSize(c.method) + stringSize(c.stepId) + stringSize(c.entry);
  if (c.request !== undefined) n += delimitedSize(reserveLength(), sizeRequest(c.request));
  n += enumSize(c.outcome);
  if (c.status !== undefined) n += delimitedSize(reserveLength(), sizeStatus(c.status));
  if (c.response !== undefined) n += delimitedSize(reserveLength(), sizeResponse(c.response));
  if (c.usage !== undefined) n += delimitedSize(reserveLength(), sizeUsage(c.usage));
  n += uint32Size(c.chunksSent) + enumSize(c.streamBreak) + int64Size(c.startMs, false) + int64Size(c.endMs, false);
  if (c.fault !== undefined) n += delimitedSize(reserveLength(), sizeFault(c.fault));
  for (let i = 0; i < c.sentTextChunks.length; i++) n += 1 + listStringSize(c.sentTextChunks[i]!);
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
  startSizing();
  const buf = alloc(sizeEpisodeCall(c));
  startWriting();
  let at = writeInt64(buf, 0, SEQUENCE, c.sequence, false);
  at = writeString(buf, at, SESSION, c.session);
  at = writeEnum(buf, at, METHOD, c.method);
  at = writeString(buf, at, STEP_ID, c.stepId);
  at = writeString(buf, at, ENTRY, c.entry);
  if (c.request !== undefined) at = writeRequest(buf, writeDelimited(buf, at, REQUEST), c.request);
  at = writeEnum(buf, at, OUTCOME, c.outcome);
  if (c.status !== undefined) at = writeStatus(buf, writeDelimited(buf, at, STATUS), c.status);
  let response: Uint8Array | undefined;
  if (c.response !== undefined) {
    const start = writeDelimited(buf, at, RESPONSE);
    at = writeResponse(buf, start, c.response);
    response = buf.subarray(start, at);
  }
  if (c.usage !== undefined) at = writeUsage(buf, writeDelimited(buf, at, USAGE), c.usage);
  at = writeUint32(buf, at, CHUNKS_SENT, c.chunksSent);
  at = writeEnum(buf, at, STREAM_BREAK, c.streamBreak);
  at = writeInt64(buf, at, START_MS, c.startMs, false);
  at = writeInt64(buf, at, END_MS, c.endMs, false);
  if (c.fault !== undefined) at = writeFault(buf, writeDelimited(buf, at, FAULT), c.fault);
  for (let i = 0; i < c.sentTextChunks.length; i++) {
    buf[at++] = SENT_TEXT_CHUNKS_FIRST;
    at = writeListString(buf, at, SENT_TEXT_CHUNKS_SECOND, c.sentTextChunks[i]!);
  }
  writeUnknown(buf, at, c.$unknown);
  return { bytes: buf, response };
}
