import { GenerateRequestSchema, MessageSchema, SamplingParamsSchema } from "../../gen/modelstub/v1/model_pb.js";

/*
 * The request limits' reading of the wire (the limits and their messages are the engine's:
 * engine/request-limits.ts). A request past a limit is refused before it is decoded, so its
 * cost is bounded by the limits, not its size: this pass reads tags and lengths only.
 */

/** The counts a request is checked against; engine/request-limits.ts gives their values. */
export type RequestLimitName = "messages" | "tools" | "toolCallsPerMessage" | "toolCalls" | "stopSequences" | "fields";

/**
 * The first limit a request passes: which, the field at fault (like `messages[3].tool_calls`),
 * and how many it holds; no count where the scan stopped at the limit (it says "more than").
 */
export interface PassedLimit {
  limit: RequestLimitName;
  field: string;
  count: number | undefined;
}

// Field numbers from the descriptors (GenerateStreamRequest has the same: the conformance test
// checks it), read once at load.
const MESSAGES = GenerateRequestSchema.field.messages.number;
const TOOLS = GenerateRequestSchema.field.tools.number;
const SAMPLING = GenerateRequestSchema.field.sampling.number;
const TOOL_CALLS = MessageSchema.field.toolCalls.number;
const STOP = SamplingParamsSchema.field.stop.number;

class Malformed extends Error {}

/** A cursor over protobuf wire bytes that reads tags and lengths and skips everything else. */
class Wire {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Malformed();
      const b = this.bytes[this.pos++]!;
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 128;
    }
    throw new Malformed();
  }

  /** Skips the value of a field of `wireType`; a group is skipped up to its end, iteratively. */
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) {
      // Not `this.pos += this.varint()`: that adds the length to the position before the length.
      const len = this.varint();
      this.pos += len;
    } else if (wireType === 5) this.pos += 4;
    else if (wireType === 3) {
      let depth = 1;
      while (depth > 0) {
        const t = this.varint() & 7;
        if (t === 3) depth++;
        else if (t === 4) depth--;
        else this.skip(t);
      }
    } else throw new Malformed();
    if (this.pos > this.end) throw new Malformed();
  }

  /** The bounds of a length-delimited value; the cursor moves past it. */
  sub(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    this.pos += len;
    if (this.pos > this.end) throw new Malformed();
    return [start, this.pos];
  }
}

/**
 * Checks the wire bytes of a GenerateRequest (or GenerateStreamRequest: the same field numbers)
 * against `limits` without decoding them: one pass that reads tags and lengths, and stops at the
 * first limit passed (still counting that field to the end, so the message gives the count).
 * Bytes it cannot read are left to the real decoder, which reports them: undefined then.
 */
export function scanRequestBytes(bytes: Uint8Array, limits: Readonly<Record<RequestLimitName, number>>): PassedLimit | undefined {
  try {
    return scan(bytes, limits);
  } catch (err) {
    if (err instanceof Malformed) return undefined;
    throw err;
  }
}

function scan(bytes: Uint8Array, limits: Readonly<Record<RequestLimitName, number>>): PassedLimit | undefined {
  const top = new Wire(bytes, 0, bytes.length);
  let fields = 0;
  let messages = 0;
  let tools = 0;
  let toolCalls = 0;
  let stops = 0;
  const tooManyFields = (): PassedLimit => ({ limit: "fields", field: "the request", count: undefined });
  /** Counts the rest of the top level's `no` fields, for the message. */
  const countRest = (no: number, count: number) => {
    while (top.pos < top.end) {
      const tag = top.varint();
      if (tag >>> 3 === no) count++;
      top.skip(tag & 7);
    }
    return count;
  };
  while (top.pos < top.end) {
    const tag = top.varint();
    const no = tag >>> 3;
    const wireType = tag & 7;
    if (++fields > limits.fields) return tooManyFields();
    if (wireType !== 2 || (no !== MESSAGES && no !== TOOLS && no !== SAMPLING)) {
      top.skip(wireType);
      continue;
    }
    const [start, end] = top.sub();
    if (no === TOOLS) {
      if (++tools > limits.tools) {
        return { limit: "tools", field: "tools", count: countRest(TOOLS, tools) };
      }
      // A tool's own fields count too (unknown ones could be many).
      const inner = new Wire(bytes, start, end);
      while (inner.pos < inner.end) {
        if (++fields > limits.fields) return tooManyFields();
        inner.skip(inner.varint() & 7);
      }
      continue;
    }
    if (no === SAMPLING) {
      const inner = new Wire(bytes, start, end);
      while (inner.pos < inner.end) {
        const t = inner.varint();
        if (++fields > limits.fields) return tooManyFields();
        if (t >>> 3 === STOP && ++stops > limits.stopSequences) {
          let count = stops;
          inner.skip(t & 7);
          while (inner.pos < inner.end) {
            const t2 = inner.varint();
            if (t2 >>> 3 === STOP) count++;
            inner.skip(t2 & 7);
          }
          return { limit: "stopSequences", field: "sampling.stop", count };
        }
        inner.skip(t & 7);
      }
      continue;
    }
    const index = messages;
    if (++messages > limits.messages) {
      return { limit: "messages", field: "messages", count: countRest(MESSAGES, messages) };
    }
    // One Message: its tool calls, and every field of them.
    const message = new Wire(bytes, start, end);
    let calls = 0;
    while (message.pos < message.end) {
      const t = message.varint();
      if (++fields > limits.fields) return tooManyFields();
      if (t >>> 3 !== TOOL_CALLS || (t & 7) !== 2) {
        message.skip(t & 7);
        continue;
      }
      const [cs, ce] = message.sub();
      calls++;
      if (calls > limits.toolCallsPerMessage) {
        while (message.pos < message.end) {
          const t2 = message.varint();
          if (t2 >>> 3 === TOOL_CALLS) calls++;
          message.skip(t2 & 7);
        }
        return { limit: "toolCallsPerMessage", field: `messages[${index}].tool_calls`, count: calls };
      }
      if (++toolCalls > limits.toolCalls) {
        return { limit: "toolCalls", field: "the request", count: undefined };
      }
      const call = new Wire(bytes, cs, ce);
      while (call.pos < call.end) {
        if (++fields > limits.fields) return tooManyFields();
        call.skip(call.varint() & 7);
      }
    }
  }
  return undefined;
}
