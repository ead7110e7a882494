import { GenerateRequestSchema, SamplingParamsSchema, type GenerateRequest, type SamplingParams } from "../../gen/modelstub/v1/model_pb.js";
import { tagsOf } from "./field-tag.js";
import { delimitedSize, reserveLength } from "./proto-lengths.js";
import { int64Size, listStringSize, stringSize, uint32Size, unknownSize } from "./proto-size.js";
import { writeDelimited, writeDouble, writeInt64, writeListString, writeString, writeUint32, writeUnknown } from "./proto-write.js";
import { sizeMessage, sizeStringTriple, writeMessage, writeStringTriple } from "./write-message.js";

/**
 * A GenerateRequest, as an episode call records it, sized then written by hand as toBinary
 * writes it. sizeRequest and writeRequest visit the same fields in the same order (the lengths
 * the first records are read back by the second, proto-lengths.ts).
 */

// Tags (field number << 3 | wire type) by field, from the descriptors at load (field-tag.ts).
const requestTags = tagsOf(GenerateRequestSchema.field);
const samplingTags = tagsOf(SamplingParamsSchema.field);

// The `optional` fields have explicit presence: written whenever set, even to zero.
function sizeSampling(s: SamplingParams): number {
  let n = (s.temperature !== undefined ? 9 : 0) + (s.topP !== undefined ? 9 : 0);
  if (s.maxTokens !== undefined) n += uint32Size(s.maxTokens, true);
  for (let i = 0; i < s.stop.length; i++) n += listStringSize(s.stop[i]!);
  if (s.seed !== undefined) n += int64Size(s.seed, true, true);
  return n + unknownSize(s.$unknown);
}

function writeSampling(buf: Buffer, at: number, s: SamplingParams): number {
  if (s.temperature !== undefined) at = writeDouble(buf, at, samplingTags.temperature, s.temperature);
  if (s.topP !== undefined) at = writeDouble(buf, at, samplingTags.topP, s.topP);
  if (s.maxTokens !== undefined) at = writeUint32(buf, at, samplingTags.maxTokens, s.maxTokens, true);
  for (let i = 0; i < s.stop.length; i++) at = writeListString(buf, at, samplingTags.stop, s.stop[i]!);
  if (s.seed !== undefined) at = writeInt64(buf, at, samplingTags.seed, s.seed, true, true);
  return writeUnknown(buf, at, s.$unknown);
}

/** The encoded size of a GenerateRequest's fields (no tag or length prefix of its own). */
export function sizeRequest(r: GenerateRequest): number {
  let n = stringSize(r.model);
  // Each slot is reserved (first argument) before the nested message's own lengths.
  for (let i = 0; i < r.messages.length; i++) n += delimitedSize(reserveLength(), sizeMessage(r.messages[i]!));
  for (let i = 0; i < r.tools.length; i++) {
    const t = r.tools[i]!;
    n += delimitedSize(reserveLength(), sizeStringTriple(t.name, t.description, t.parametersJson, t.$unknown));
  }
  if (r.sampling !== undefined) n += delimitedSize(reserveLength(), sizeSampling(r.sampling));
  return n + stringSize(r.stepId) + unknownSize(r.$unknown);
}

/** Writes a GenerateRequest's fields at `at`, as sized by sizeRequest; returns the position after. */
export function writeRequest(buf: Buffer, at: number, r: GenerateRequest): number {
  at = writeString(buf, at, requestTags.model, r.model);
  for (let i = 0; i < r.messages.length; i++) at = writeMessage(buf, writeDelimited(buf, at, requestTags.messages), r.messages[i]!);
  for (let i = 0; i < r.tools.length; i++) {
    const t = r.tools[i]!;
    at = writeStringTriple(buf, writeDelimited(buf, at, requestTags.tools), t.name, t.description, t.parametersJson, t.$unknown);
  }
  if (r.sampling !== undefined) at = writeSampling(buf, writeDelimited(buf, at, requestTags.sampling), r.sampling);
  at = writeString(buf, at, requestTags.stepId, r.stepId);
  return writeUnknown(buf, at, r.$unknown);
}
