import { fromBinary } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  GenerateStreamRequestSchema,
  MessageSchema,
  SamplingParamsSchema,
  ToolCallSchema,
  ToolSchema,
  type GenerateRequest,
  type GenerateStreamRequest,
  type Message,
  type Role,
  type SamplingParams,
  type Tool,
  type ToolCall,
} from "../../gen/modelstub/v1/model_pb.js";
import { sameTags, tagsOf } from "./field-tag.js";
import { OFF_SHAPE, WireCursor } from "./wire-cursor.js";

/*
 * The hand-written decoder of Generate and GenerateStream requests (issue 21: fromBinary's
 * reflection was about 6.5% of a call's CPU). It reads the shape toBinary and other encoders
 * write: one-byte tags of known fields with their wire types, in any order and any number of
 * times. Anything else (an unknown field, another wire type, a second `sampling`, which
 * protobuf-es would merge, invalid UTF-8, a value past its message's end) sends the same bytes
 * to fromBinary, so that what protobuf-es decodes, and how it fails, stays exactly its own.
 *
 * The objects are built as protobuf-es's create() builds them, with the same keys in the same
 * order: $typeName, then every implicit-presence and repeated field at its zero value, then a
 * message or optional field added as it is read.
 */

// Tags (field number << 3 | wire type, one byte each) by field, from the descriptors at load
// (field-tag.ts). GenerateStreamRequest has GenerateRequest's: test/wire/conformance.test.ts.
const requestTags = tagsOf(GenerateRequestSchema.field);
const messageTags = tagsOf(MessageSchema.field);
const samplingTags = tagsOf(SamplingParamsSchema.field);
// ToolCall and Tool, three strings each, read by one function: the same tags, checked at load.
const tripleTags = tagsOf(ToolCallSchema.field);
sameTags(
  [ToolCallSchema.field.id, ToolCallSchema.field.name, ToolCallSchema.field.arguments],
  [ToolSchema.field.name, ToolSchema.field.description, ToolSchema.field.parametersJson],
);

type AnyGenerateRequest = GenerateRequest | GenerateStreamRequest;

function readRequest<R extends AnyGenerateRequest>(c: WireCursor, typeName: R["$typeName"]): R {
  const request = { $typeName: typeName, model: "", messages: [], tools: [], stepId: "" } as unknown as R;
  while (c.pos < c.end) {
    switch (c.tag()) {
      case requestTags.model:
        request.model = c.string();
        break;
      case requestTags.messages:
        request.messages.push(readMessage(c));
        break;
      case requestTags.tools:
        request.tools.push(readTool(c));
        break;
      case requestTags.sampling:
        if (request.sampling !== undefined) throw OFF_SHAPE;
        request.sampling = readSampling(c);
        break;
      case requestTags.stepId:
        request.stepId = c.string();
        break;
      default:
        throw OFF_SHAPE;
    }
  }
  return request;
}

function readMessage(c: WireCursor): Message {
  const outer = c.enter();
  const message: Message = { $typeName: "modelstub.v1.Message", role: 0, content: "", toolCalls: [], toolCallId: "", name: "" };
  while (c.pos < c.end) {
    switch (c.tag()) {
      case messageTags.role:
        // Open enum: any int32 as it is, as protobuf-es reads it.
        message.role = (c.uint32() | 0) as Role;
        break;
      case messageTags.content:
        message.content = c.string();
        break;
      case messageTags.toolCalls:
        message.toolCalls.push(readToolCall(c));
        break;
      case messageTags.toolCallId:
        message.toolCallId = c.string();
        break;
      case messageTags.name:
        message.name = c.string();
        break;
      default:
        throw OFF_SHAPE;
    }
  }
  c.leave(outer);
  return message;
}

/** ToolCall and Tool: three string fields, read into [first, second, third]. */
function readThreeStrings(c: WireCursor, into: [string, string, string]): void {
  const outer = c.enter();
  while (c.pos < c.end) {
    const tag = c.tag();
    if (tag === tripleTags.id) into[0] = c.string();
    else if (tag === tripleTags.name) into[1] = c.string();
    else if (tag === tripleTags.arguments) into[2] = c.string();
    else throw OFF_SHAPE;
  }
  c.leave(outer);
}

function readToolCall(c: WireCursor): ToolCall {
  const s: [string, string, string] = ["", "", ""];
  readThreeStrings(c, s);
  return { $typeName: "modelstub.v1.ToolCall", id: s[0], name: s[1], arguments: s[2] };
}

function readTool(c: WireCursor): Tool {
  const s: [string, string, string] = ["", "", ""];
  readThreeStrings(c, s);
  return { $typeName: "modelstub.v1.Tool", name: s[0], description: s[1], parametersJson: s[2] };
}

function readSampling(c: WireCursor): SamplingParams {
  const outer = c.enter();
  const sampling: SamplingParams = { $typeName: "modelstub.v1.SamplingParams", stop: [] };
  while (c.pos < c.end) {
    switch (c.tag()) {
      case samplingTags.temperature:
        sampling.temperature = c.double();
        break;
      case samplingTags.topP:
        sampling.topP = c.double();
        break;
      case samplingTags.maxTokens:
        sampling.maxTokens = c.uint32();
        break;
      case samplingTags.stop:
        sampling.stop.push(c.string());
        break;
      case samplingTags.seed:
        sampling.seed = c.int64();
        break;
      default:
        throw OFF_SHAPE;
    }
  }
  c.leave(outer);
  return sampling;
}

function readFast<R extends AnyGenerateRequest>(bytes: Buffer, typeName: R["$typeName"]): R | undefined {
  try {
    return readRequest<R>(new WireCursor(bytes), typeName);
  } catch {
    // OFF_SHAPE, or anything unforeseen: either way fromBinary, never a different answer.
    return undefined;
  }
}

/** The fast path alone: the request, or undefined where decodeGenerateRequest falls back to fromBinary. */
export function readGenerateRequest(bytes: Buffer): GenerateRequest | undefined {
  return readFast<GenerateRequest>(bytes, "modelstub.v1.GenerateRequest");
}

/** The fast path alone, for GenerateStreamRequest. */
export function readGenerateStreamRequest(bytes: Buffer): GenerateStreamRequest | undefined {
  return readFast<GenerateStreamRequest>(bytes, "modelstub.v1.GenerateStreamRequest");
}

/** A Generate request's bytes decoded: exactly fromBinary(GenerateRequestSchema, bytes). */
export function decodeGenerateRequest(bytes: Buffer): GenerateRequest {
  return readGenerateRequest(bytes) ?? fromBinary(GenerateRequestSchema, bytes);
}

/** A GenerateStream request's bytes decoded: exactly fromBinary(GenerateStreamRequestSchema, bytes). */
export function decodeGenerateStreamRequest(bytes: Buffer): GenerateStreamRequest {
  return readGenerateStreamRequest(bytes) ?? fromBinary(GenerateStreamRequestSchema, bytes);
}
