import { toBinary } from "@bufbuild/protobuf";
import { GenerateStreamResponseSchema, type GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import { tagsOf } from "./field-tag.js";
import { startSizing, startWriting } from "./proto-lengths.js";
import { listStringSize, stringSize, unknownSize } from "./proto-size.js";
import { writeListString, writeString, writeUnknown } from "./proto-write.js";

// Tags (field number << 3 | wire type) by field, from the descriptors at load (field-tag.ts).
const frameTags = tagsOf(GenerateStreamResponseSchema.field);

/**
 * Serializes a GenerateStream frame for the wire. A text delta, nearly every frame of a long
 * stream, is written by hand: id, model, then the oneof member (numbered after the regular
 * fields, so last), exactly the bytes toBinary writes for it, without walking the schema for
 * each of a thousand frames. Every other frame goes through toBinary.
 */
export function encodeStreamFrame(frame: GenerateStreamResponse): Buffer {
  if (frame.frame.case !== "textDelta") {
    const bytes = toBinary(GenerateStreamResponseSchema, frame);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const text = frame.frame.value;
  startSizing();
  // A set oneof member is written even when empty (as a list element is): its presence is the frame's kind.
  const buf = Buffer.allocUnsafe(stringSize(frame.id) + stringSize(frame.model) + listStringSize(text) + unknownSize(frame.$unknown));
  startWriting();
  const at = writeString(buf, writeString(buf, 0, frameTags.id, frame.id), frameTags.model, frame.model);
  writeUnknown(buf, writeListString(buf, at, frameTags.textDelta, text), frame.$unknown);
  return buf;
}
