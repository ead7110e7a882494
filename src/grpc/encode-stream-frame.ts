import { toBinary } from "@bufbuild/protobuf";
import { GenerateStreamResponseSchema, type GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import { varintSize, writeVarint } from "../shared/varint.js";

// Tags (field number << 3 | wire type 2) of the fields written by hand below.
const ID_TAG = (1 << 3) | 2;
const MODEL_TAG = (2 << 3) | 2;
const TEXT_DELTA_TAG = (10 << 3) | 2;

function stringFieldSize(s: string): number {
  if (s === "") return 0; // proto3: an empty string is not written
  const n = Buffer.byteLength(s);
  return 1 + varintSize(n) + n;
}

function writeStringField(buf: Buffer, at: number, tag: number, s: string, always = false): number {
  if (s === "" && !always) return at;
  buf[at++] = tag;
  const n = Buffer.byteLength(s);
  at = writeVarint(buf, at, n);
  return at + buf.write(s, at, n, "utf8");
}

/**
 * Serializes a GenerateStream frame for the wire. A text delta, nearly every frame of a long
 * stream, is written by hand: id, model, then the oneof member (numbered after the regular
 * fields, so last), exactly the bytes toBinary writes for it, without walking the schema for
 * each of a thousand frames. Every other frame goes through toBinary. Frames are built by the
 * engine as plain literals, so they carry no unknown fields to lose.
 */
export function encodeStreamFrame(frame: GenerateStreamResponse): Buffer {
  if (frame.frame.case !== "textDelta") {
    const bytes = toBinary(GenerateStreamResponseSchema, frame);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const text = frame.frame.value;
  const textBytes = Buffer.byteLength(text);
  const size = stringFieldSize(frame.id) + stringFieldSize(frame.model) + 1 + varintSize(textBytes) + textBytes;
  const buf = Buffer.allocUnsafe(size);
  let at = writeStringField(buf, 0, ID_TAG, frame.id);
  at = writeStringField(buf, at, MODEL_TAG, frame.model);
  // A set oneof member is written even when empty: its presence is the frame's kind.
  writeStringField(buf, at, TEXT_DELTA_TAG, text, true);
  return buf;
}
