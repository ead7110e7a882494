import type { UnknownField } from "@bufbuild/protobuf";
import { MessageSchema, ToolCallSchema, ToolSchema, type Message } from "../../gen/modelstub/v1/model_pb.js";
import { sameTags, tagsOf } from "./field-tag.js";
import { delimitedSize, reserveLength } from "./proto-lengths.js";
import { enumSize, stringSize, unknownSize } from "./proto-size.js";
import { writeDelimited, writeEnum, writeString, writeUnknown } from "./proto-write.js";

/**
 * A conversation Message (of a request, or a response's reply), sized then written by hand as
 * toBinary writes it: fields in number order, proto3 zero values left out, unknown fields last.
 * sizeMessage and writeMessage visit the same fields in the same order: the lengths the first
 * records (proto-lengths.ts) are read back by the second.
 */

// Tags (field number << 3 | wire type) by field, from the descriptors at load (field-tag.ts).
const messageTags = tagsOf(MessageSchema.field);
// A message of three strings (a ToolCall; a request's Tool), written by one function: the two
// must keep the same tags, checked at load.
const tripleTags = tagsOf(ToolCallSchema.field);
sameTags(
  [ToolCallSchema.field.id, ToolCallSchema.field.name, ToolCallSchema.field.arguments],
  [ToolSchema.field.name, ToolSchema.field.description, ToolSchema.field.parametersJson],
);

/** The size of a message made of string fields 1, 2 and 3 (ToolCall, Tool), unknown fields last. */
export function sizeStringTriple(a: string, b: string, c: string, unknown: UnknownField[] | undefined): number {
  return stringSize(a) + stringSize(b) + stringSize(c) + unknownSize(unknown);
}

/** Writes a message made of string fields 1, 2 and 3, as sized by sizeStringTriple. */
export function writeStringTriple(buf: Buffer, at: number, a: string, b: string, c: string, unknown: UnknownField[] | undefined): number {
  return writeUnknown(buf, writeString(buf, writeString(buf, writeString(buf, at, tripleTags.id, a), tripleTags.name, b), tripleTags.arguments, c), unknown);
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
  at = writeEnum(buf, at, messageTags.role, m.role);
  at = writeString(buf, at, messageTags.content, m.content);
  const calls = m.toolCalls;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    at = writeStringTriple(buf, writeDelimited(buf, at, messageTags.toolCalls), c.id, c.name, c.arguments, c.$unknown);
  }
  at = writeString(buf, at, messageTags.toolCallId, m.toolCallId);
  at = writeString(buf, at, messageTags.name, m.name);
  return writeUnknown(buf, at, m.$unknown);
}
