/*
 * How much one model request may hold, on both transports: README ("Safety when exposed") lists
 * these. Decoding costs per element, not per byte: 4 MiB of empty messages is 2 million objects
 * and seconds of a single-threaded server. A request past a limit is refused before it is
 * decoded (gRPC: RESOURCE_EXHAUSTED; HTTP: 400), so its cost is bounded by the limits, not its size.
 */

/** The limits of one request; every count is per request unless its name says otherwise. */
export interface RequestLimits {
  /** `messages`: 10,000 (a long agent run is a few hundred turns). */
  messages: number;
  /** `tools`: 1,000 (model APIs take 128 or fewer). */
  tools: number;
  /** `tool_calls` of one message: 1,000. */
  toolCallsPerMessage: number;
  /** `tool_calls` of all messages together: 10,000. */
  toolCalls: number;
  /** `sampling.stop`: 1,000 (model APIs take 4). */
  stopSequences: number;
  /**
   * Fields at every level together, unknown ones included: 100,000. The limits above allow about
   * 85,000 fields of a normal request; this bounds what they do not count (unknown fields).
   */
  fields: number;
}

/** The limits modelstub serves with. */
export const requestLimits: Readonly<RequestLimits> = {
  messages: 10_000,
  tools: 1_000,
  toolCallsPerMessage: 1_000,
  toolCalls: 10_000,
  stopSequences: 1_000,
  fields: 100_000,
};

/** A limit passed: the field at fault (like `messages[3].tool_calls`) and a message naming the count and the limit. */
export interface OverLimit {
  field: string;
  message: string;
}

/** The one sentence both transports use. */
export function overLimitMessage(field: string, count: number | string, what: string, limit: number, per: string): string {
  return `${field} holds ${count} ${what}; modelstub reads at most ${limit} ${per} (a request past a limit is refused before it is decoded)`;
}

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
    }
    else if (wireType === 5) this.pos += 4;
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
export function checkRequestBytes(bytes: Uint8Array, limits: Readonly<RequestLimits> = requestLimits): OverLimit | undefined {
  try {
    return scan(bytes, limits);
  } catch (err) {
    if (err instanceof Malformed) return undefined;
    throw err;
  }
}

function scan(bytes: Uint8Array, limits: Readonly<RequestLimits>): OverLimit | undefined {
  const top = new Wire(bytes, 0, bytes.length);
  let fields = 0;
  let messages = 0;
  let tools = 0;
  let toolCalls = 0;
  let stops = 0;
  const tooManyFields = () => {
    const field = "the request";
    return { field, message: overLimitMessage(field, `more than ${limits.fields}`, "fields in all (unknown ones included)", limits.fields, "in a request") };
  };
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
    if (wireType !== 2 || (no !== 2 && no !== 3 && no !== 4)) {
      top.skip(wireType);
      continue;
    }
    const [start, end] = top.sub();
    if (no === 3) {
      if (++tools > limits.tools) {
        return { field: "tools", message: overLimitMessage("tools", countRest(3, tools), "tools", limits.tools, "in a request") };
      }
      // A tool's own fields count too (unknown ones could be many).
      const inner = new Wire(bytes, start, end);
      while (inner.pos < inner.end) {
        if (++fields > limits.fields) return tooManyFields();
        inner.skip(inner.varint() & 7);
      }
      continue;
    }
    if (no === 4) {
      const inner = new Wire(bytes, start, end);
      while (inner.pos < inner.end) {
        const t = inner.varint();
        if (++fields > limits.fields) return tooManyFields();
        if (t >>> 3 === 4 && ++stops > limits.stopSequences) {
          let count = stops;
          inner.skip(t & 7);
          while (inner.pos < inner.end) {
            const t2 = inner.varint();
            if (t2 >>> 3 === 4) count++;
            inner.skip(t2 & 7);
          }
          return { field: "sampling.stop", message: overLimitMessage("sampling.stop", count, "stop sequences", limits.stopSequences, "in a request") };
        }
        inner.skip(t & 7);
      }
      continue;
    }
    const index = messages;
    if (++messages > limits.messages) {
      return { field: "messages", message: overLimitMessage("messages", countRest(2, messages), "messages", limits.messages, "in a request") };
    }
    // One Message: its tool calls (field 3), and every field of them.
    const message = new Wire(bytes, start, end);
    let calls = 0;
    while (message.pos < message.end) {
      const t = message.varint();
      if (++fields > limits.fields) return tooManyFields();
      if (t >>> 3 !== 3 || (t & 7) !== 2) {
        message.skip(t & 7);
        continue;
      }
      const [cs, ce] = message.sub();
      calls++;
      if (calls > limits.toolCallsPerMessage) {
        while (message.pos < message.end) {
          const t2 = message.varint();
          if (t2 >>> 3 === 3) calls++;
          message.skip(t2 & 7);
        }
        const field = `messages[${index}].tool_calls`;
        return { field, message: overLimitMessage(field, calls, "tool calls", limits.toolCallsPerMessage, "in a message") };
      }
      if (++toolCalls > limits.toolCalls) {
        const field = "the request";
        return { field, message: overLimitMessage(field, `more than ${limits.toolCalls}`, "tool calls in all its messages", limits.toolCalls, "in a request") };
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
