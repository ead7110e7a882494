import { fromBinary } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  GenerateStreamRequestSchema,
  type GenerateRequest,
  type GenerateStreamRequest,
  type Message,
  type Role,
  type SamplingParams,
  type Tool,
  type ToolCall,
} from "../../gen/modelstub/v1/model_pb.js";
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

// Tags: field number << 3 | wire type, one byte each.
// GenerateRequest, GenerateStreamRequest
const MODEL = 0x0a;
const MESSAGES = 0x12;
const TOOLS = 0x1a;
const SAMPLING = 0x22;
const STEP_ID = 0x2a;
// Message
const ROLE = 0x08;
const CONTENT = 0x12;
const TOOL_CALLS = 0x1a;
const TOOL_CALL_ID = 0x22;
const NAME = 0x2a;
// ToolCall (id, name, arguments) and Tool (name, description, parameters_json)
const FIRST = 0x0a;
const THIRD = 0x1a;
// SamplingParams
const TEMPERATURE = 0x09;
const TOP_P = 0x11;
const MAX_TOKENS = 0x18;
const STOP = 0x22;
const SEED = 0x28;

type AnyGenerateRequest = GenerateRequest | GenerateStreamRequest;

function readRequest<R extends AnyGenerateRequest>(c: WireCursor, typeName: R["$typeName"]): R {
  const request = { $typeName: typeName, model: "", messages: [], tools: [], stepId: "" } as unknown as R;
  while (c.pos < c.end) {
    switch (c.tag()) {
      case MODEL:
        request.model = c.string();
        break;
      case MESSAGES:
        request.messages.push(readMessage(c));
        break;
      case TOOLS:
        request.tools.push(readTool(c));
        break;
      case SAMPLING:
        if (request.sampling !== undefined) throw OFF_SHAPE;
        request.sampling = readSampling(c);
        break;
      case STEP_ID:
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
      case ROLE:
        // Open enum: any int32 as it is, as protobuf-es reads it.
        message.role = (c.uint32() | 0) as Role;
        break;
      case CONTENT:
        message.content = c.string();
        break;
      case TOOL_CALLS:
        message.toolCalls.push(readToolCall(c));
        break;
      case TOOL_CALL_ID:
        message.toolCallId = c.string();
        break;
      case NAME:
        message.name = c.string();
        break;
      default:
        throw OFF_SHAPE;
    }
  }
  c.leave(outer);
  return message;
}

/** ToolCall and Tool: three string fields numbered 1 to 3, read into [first, second, third]. */
function readThreeStrings(c: WireCursor, into: [string, string, string]): void {
  const outer = c.enter();
  while (c.pos < c.end) {
    const tag = c.tag();
    // 0x0a, 0x12, 0x1a: fields 1 to 3, length-delimited.
    if (tag < FIRST || tag > THIRD || (tag & 7) !== 2) throw OFF_SHAPE;
    into[(tag >> 3) - 1] = c.string();
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
      case TEMPERATURE:
        sampling.temperature = c.double();
        break;
      case TOP_P:
        sampling.topP = c.double();
        break;
      case MAX_TOKENS:
        sampling.maxTokens = c.uint32();
        break;
      case STOP:
        sampling.stop.push(c.string());
        break;
      case SEED:
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
