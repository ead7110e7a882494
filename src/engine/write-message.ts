import type { UnknownField } from "@bufbuild/protobuf";
import type { Message } from "../../gen/modelstub/v1/model_pb.js";
import { delimitedSize, reserveLength } from "./proto-lengths.js";
import { enumSize, stringSize, unknownSize } from "./proto-size.js";
import { writeDelimited, writeEnum, writeString, writeUnknown } from "./proto-write.js";

/**
 * A conversation Message (of a request, or a response's reply), sized then written by hand as
 * toBinary writes it: fields in number order, proto3 zero values left out, unknown fields last.
 * sizeMessage and writeMessage visit the same fields in the same order: the lengths the first
 * records (proto-lengths.ts) are read back by the second.
 */

// Tags: field number << 3 | wire type (0 varint, 2 length-delimited).
const ROLE = (1 << 3) | 0;
const CONTENT = (2 << 3) | 2;
const TOOL_CALLS = (3 << 3) | 2;
const TOOL_CALL_ID = (4 << 3) | 2;
const NAME = (5 << 3) | 2;
// A message of three strings numbered 1 to 3 (a ToolCall; a request's Tool).
const FIRST = (1 << 3) | 2;
const SECOND = (2 << 3) | 2;
const THIRD = (3 << 3) | 2;

/** The size of a message made of string fields 1, 2 and 3 (ToolCall, Tool), unknown fields last. */
export function sizeStringTriple(a: string, b: string, c: string, unknown: UnknownField[] | undefined): number {
  return stringSize(a) + stringSize(b) + stringSize(c) + unknownSize(unknown);
}

/** Writes a message made of string fields 1, 2 and 3, as sized by sizeStringTriple. */
export function writeStringTriple(buf: Buffer, at: number, a: string, b: string, c: string, unknown: UnknownField[] | undefined): number {
  return writeUnknown(buf, writeString(buf, writeString(buf, writeString(buf, at, FIRST, a), SECOND, b), THIRD, c), unknown);
}

/** The encoded size of a Message's fields (no tag or length prefix of its own). */
export function sizeMessage(m: Message): number {
  let n = enumSize(m.role) + stringSize(m.content);
  const calls = m.toolCalls;
  // The slot is reserved (first argument) before the tool call's own lengths are recorded.
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    n += delimitedSize(reserveLength(), sizeStringTriple(c.id, c.name, c.arguments, c.$unknown));
  }
  return n + stringSize(m.toolCallId) + stringSize(m.name) + unknownSize(m.$unknown);
}

/** Writes a Message's fields at `at`, as sized by sizeMessage; returns the position after them. */
export function writeMessage(buf: Buffer, at: number, m: Message): number {
  at = writeEnum(buf, at, ROLE, m.role);
  at = writeString(buf, at, CONTENT, m.content);
  const calls = m.toolCalls;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    at = writeStringTriple(buf, writeDelimited(buf, at, TOOL_CALLS), c.id, c.name, c.arguments, c.$unknown);
  }
  at = writeString(buf, at, TOOL_CALL_ID, m.toolCallId);
  at = writeString(buf, at, NAME, m.name);
  return writeUnknown(buf, at, m.$unknown);
}
