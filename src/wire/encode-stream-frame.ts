import { toBinary } from "@bufbuild/protobuf";
import { GenerateStreamResponseSchema, type GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import { tagsOf } from "./field-tag.js";
import { startSizing, startWriting } from "./proto-lengths.js";
import { listStringSize, stringSize, unknownSize } from "./proto-size.js";
import { writeListString, writeString, writeUnknown } from "./proto-write.js";

// Tags (field number << 3 | wire type) by field, from the descriptors at load (field-tag.ts).
const frameTags = tagsOf(GenerateStreamResponseSchema.field);

/**
 * Serializes a GenerateStream frame for the wire, into a buffer of its own. A text delta, nearly
 * every frame of a long stream, is written by hand: id, model, then the oneof member (numbered
 * after the regular fields, so last), exactly the bytes toBinary writes for it, without walking
 * the schema for each of a thousand frames. Every other frame goes through toBinary.
 */
export function encodeStreamFrame(frame: GenerateStreamResponse): Buffer {
  return encodeInto(frame, (size) => Buffer.allocUnsafe(size));
}

/**
 * The largest text frame sendStreamFrame writes into its reused buffer: a coalesced frame of a
 * long reply is 16-32 KiB (plan-frames.ts); a larger one (a reply of a few huge chunks) gets a
 * buffer of its own, so that the reused one never holds MBs between calls.
 */
const maxReusedBytes = 64 * 1024;

const reused = Buffer.allocUnsafeSlow(maxReusedBytes);

/**
 * encodeStreamFrame for grpc-js's response serializer: a text delta of up to 64 KiB is written
 * into one buffer reused by every frame, valid only until the next call. grpc-js copies what a
 * serializer returns into the length-prefixed message it sends before it returns (its
 * serializeMessage), so nothing it keeps points at the reused bytes. A 960 KB echo streamed in
 * 59 frames allocated 59 buffers of 16 KiB only to have them copied and dropped: a backing store
 * each, and their garbage, about 0.5 ms of the stream's CPU (docs/performance.md, "Streaming
 * costs what unary costs"). Never hand its result to anything that keeps it.
 */
export function sendStreamFrame(frame: GenerateStreamResponse): Buffer {
  return encodeInto(frame, (size) => (size <= maxReusedBytes ? reused.subarray(0, size) : Buffer.allocUnsafe(size)));
}

function encodeInto(frame: GenerateStreamResponse, bufferOf: (size: number) => Buffer): Buffer {
  if (frame.frame.case !== "textDelta") {
    const bytes = toBinary(GenerateStreamResponseSchema, frame);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const text = frame.frame.value;
  startSizing();
  // A set oneof member is written even when empty (as a list element is): its presence is the frame's kind.
  const buf = bufferOf(stringSize(frame.id) + stringSize(frame.model) + listStringSize(text) + unknownSize(frame.$unknown));
  startWriting();
  const at = writeString(buf, writeString(buf, 0, frameTags.id, frame.id), frameTags.model, frame.model);
  writeUnknown(buf, writeListString(buf, at, frameTags.textDelta, text), frame.$unknown);
  return buf;
}
