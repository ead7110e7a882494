import type { GenerateResponse, Usage } from "../../gen/modelstub/v1/model_pb.js";
import { delimitedSize, reserveLength, startSizing, startWriting } from "./proto-lengths.js";
import { enumSize, stringSize, uint32Size, unknownSize } from "./proto-size.js";
import { writeDelimited, writeEnum, writeString, writeUint32, writeUnknown } from "./proto-write.js";
import { sizeMessage, writeMessage } from "./write-message.js";

/**
 * A GenerateResponse and a Usage, sized then written by hand as toBinary writes them. Each
 * size/write pair visits the same fields in the same order (the lengths the first records are
 * read back by the second, proto-lengths.ts).
 */

// Tags: field number << 3 | wire type (0 varint, 2 length-delimited).
const ID = (1 << 3) | 2;
const MODEL = (2 << 3) | 2;
const MESSAGE = (3 << 3) | 2;
const FINISH_REASON = (4 << 3) | 0;
const USAGE = (5 << 3) | 2;
const INPUT_TOKENS = (1 << 3) | 0;
const OUTPUT_TOKENS = (2 << 3) | 0;
const TOTAL_TOKENS = (3 << 3) | 0;

/** The encoded size of a Usage's fields (it records no lengths). */
export function sizeUsage(u: Usage): number {
  return uint32Size(u.inputTokens) + uint32Size(u.outputTokens) + uint32Size(u.totalTokens) + unknownSize(u.$unknown);
}

/** Writes a Usage's fields at `at`; returns the position after them. */
export function writeUsage(buf: Buffer, at: number, u: Usage): number {
  at = writeUint32(buf, at, INPUT_TOKENS, u.inputTokens);
  at = writeUint32(buf, at, OUTPUT_TOKENS, u.outputTokens);
  at = writeUint32(buf, at, TOTAL_TOKENS, u.totalTokens);
  return writeUnknown(buf, at, u.$unknown);
}

/** The encoded size of a GenerateResponse's fields (no tag or length prefix of its own). */
export function sizeResponse(r: GenerateResponse): number {
  let n = stringSize(r.id) + stringSize(r.model);
  // Each slot is reserved (first argument) before the nested message's own lengths.
  if (r.message !== undefined) n += delimitedSize(reserveLength(), sizeMessage(r.message));
  n += enumSize(r.finishReason);
  if (r.usage !== undefined) n += delimitedSize(reserveLength(), sizeUsage(r.usage));
  return n + unknownSize(r.$unknown);
}

/** Writes a GenerateResponse's fields at `at`, as sized by sizeResponse; returns the position after. */
export function writeResponse(buf: Buffer, at: number, r: GenerateResponse): number {
  at = writeString(buf, at, ID, r.id);
  at = writeString(buf, at, MODEL, r.model);
  if (r.message !== undefined) at = writeMessage(buf, writeDelimited(buf, at, MESSAGE), r.message);
  at = writeEnum(buf, at, FINISH_REASON, r.finishReason);
  if (r.usage !== undefined) at = writeUsage(buf, writeDelimited(buf, at, USAGE), r.usage);
  return writeUnknown(buf, at, r.$unknown);
}

/** A GenerateResponse's bytes on their own, exactly toBinary(GenerateResponseSchema, r). */
export function encodeResponseAlone(r: GenerateResponse): Uint8Array {
  startSizing();
  const buf = Buffer.allocUnsafeSlow(sizeResponse(r));
  startWriting();
  writeResponse(buf, 0, r);
  return buf;
}
