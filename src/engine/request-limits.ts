import { scanRequestBytes } from "../wire/scan-request-bytes.js";

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

/** What each limit counts, and over what, as the over-limit message says it. */
const limitWords: Record<keyof RequestLimits, readonly [what: string, per: string]> = {
  messages: ["messages", "in a request"],
  tools: ["tools", "in a request"],
  toolCallsPerMessage: ["tool calls", "in a message"],
  toolCalls: ["tool calls in all its messages", "in a request"],
  stopSequences: ["stop sequences", "in a request"],
  fields: ["fields in all (unknown ones included)", "in a request"],
};

/**
 * Checks the wire bytes of a GenerateRequest (or GenerateStreamRequest) against `limits` without
 * decoding them (wire/scan-request-bytes.ts reads them): the first limit passed, with its
 * message, or undefined. Bytes it cannot read are left to the real decoder, which reports them.
 */
export function checkRequestBytes(bytes: Uint8Array, limits: Readonly<RequestLimits> = requestLimits): OverLimit | undefined {
  const passed = scanRequestBytes(bytes, limits);
  if (passed === undefined) return undefined;
  const [what, per] = limitWords[passed.limit];
  const limit = limits[passed.limit];
  return { field: passed.field, message: overLimitMessage(passed.field, passed.count ?? `more than ${limit}`, what, limit, per) };
}
