import { GenerateResponseSchema, UsageSchema, type GenerateResponse, type Usage } from "../../gen/modelstub/v1/model_pb.js";
import { tagsOf } from "./field-tag.js";
import { delimitedSize, reserveLength, startSizing, startWriting } from "./proto-lengths.js";
import { enumSize, stringSize, uint32Size, unknownSize } from "./proto-size.js";
import { writeDelimited, writeEnum, writeString, writeUint32, writeUnknown } from "./proto-write.js";
import { sizeMessage, writeMessage } from "./write-message.js";

/**
 * A GenerateResponse and a Usage, sized then written by hand as toBinary writes them. Each
 * size/write pair visits the same fields in the same order (the lengths the first records are
 * read back by the second, proto-lengths.ts).
 */

// Tags (field number << 3 | wire type) by field, from the descriptors at load (field-tag.ts).
const responseTags = tagsOf(GenerateResponseSchema.field);
const usageTags = tagsOf(UsageSchema.field);

/** The encoded size of a Usage's fields (it records no lengths). */
export function sizeUsage(u: Usage): number {
  return uint32Size(u.inputTokens) + uint32Size(u.outputTokens) + uint32Size(u.totalTokens) + unknownSize(u.$unknown);
}

/** Writes a Usage's fields at `at`; returns the position after them. */
export function writeUsage(buf: Buffer, at: number, u: Usage): number {
  at = writeUint32(buf, at, usageTags.inputTokens, u.inputTokens);
  at = writeUint32(buf, at, usageTags.outputTokens, u.outputTokens);
  at = writeUint32(buf, at, usageTags.totalTokens, u.totalTokens);
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
  at = writeString(buf, at, responseTags.id, r.id);
  at = writeString(buf, at, responseTags.model, r.model);
  if (r.message !== undefined) at = writeMessage(buf, writeDelimited(buf, at, responseTags.message), r.message);
  at = writeEnum(buf, at, responseTags.finishReason, r.finishReason);
  if (r.usage !== undefined) at = writeUsage(buf, writeDelimited(buf, at, responseTags.usage), r.usage);
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
