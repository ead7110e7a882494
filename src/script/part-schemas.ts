import { z } from "zod";
import { maxUint32 } from "./script-limits.js";
import { codeNames } from "../shared/status-code.js";

/*
 * The pieces of the script format that fault plans speak too (a duration, a latency, a status,
 * a stream break, a matcher): one definition, so a fault reads exactly like the script's own
 * failure, and script-schema.ts and fault-plan-schema.ts import them without importing each other.
 */

const durationText = /^\d+(\.\d+)?\s*(ms|s|m)$/;

/** A declared wait: whole milliseconds, or a text like `250ms`, `1.5s`, `2m`. */
export const DurationSchema = z.union(
  [
    z.int().nonnegative(),
    z.string().regex(durationText, { error: "expected a duration like 250ms, 1.5s or 2m" }),
  ],
  { error: "expected a duration: a whole number of milliseconds, or a text like 250ms, 1.5s or 2m" },
).describe("A declared wait: whole milliseconds, or a text like 250ms, 1.5s, 2m.");

const LatencyObjectSchema = z
  .strictObject({
    first_byte: DurationSchema.optional().describe("Wait before the first byte (default 0)."),
    per_chunk: DurationSchema.optional().describe("Wait before every stream chunk after the first."),
    chunks_per_second: z.number().positive().optional().describe("Alternative to per_chunk: a rate, rounded to whole ms per chunk."),
  })
  .describe("Declared latency of an entry.");

/** Latency: a duration (before the first byte), or first byte and per-chunk waits. */
export const LatencySchema = z
  .union([DurationSchema, LatencyObjectSchema], {
    error: "expected a latency: a duration like 250ms, or a mapping with first_byte, per_chunk or chunks_per_second",
  })
  .describe("Declared latency: a duration before the first byte (250ms), or {first_byte, per_chunk | chunks_per_second}.");

const metadataKey = /^[a-z][a-z0-9._-]*$/;

/** A status to end a call with. */
export const ErrorSchema = z.strictObject({
  code: z
    .union([z.enum(codeNames.filter((n) => n !== "OK") as [string, ...string[]]), z.int().min(1).max(16)], {
      error: `expected a gRPC status code name (${codeNames.slice(1).join(", ")}) or a number from 1 to 16`,
    })
    .describe("gRPC status code, by name (UNAVAILABLE) or number (14)."),
  message: z.string().optional().describe("Status message the client sees (default: scripted error at <entry>)."),
  trailers: z
    .record(z.string().regex(metadataKey, { error: "trailer names are lowercase and start with a letter, like retry-after-ms" }), z.string())
    .optional()
    .describe("Trailing metadata, in this order (e.g. retry-after-ms): printable ASCII values; a name ending in -bin takes base64; no grpc-* or HTTP connection names."),
}).describe("End the call with this gRPC status.");

/** A scripted stream break. */
export const BreakSchema = z.strictObject({
  after_chunks: z.int().nonnegative().max(maxUint32).describe("Content chunks delivered before the break (at most the chunks the reply has)."),
  then: z.enum(["error", "hang", "drop"]).describe("error: end with a status; hang: wait for the caller's deadline; drop: reset the stream."),
  error: ErrorSchema.optional().describe("With then: error (default UNAVAILABLE)."),
}).describe("Break the stream after N chunks.");

/** Conditions on the request; all given ones must hold. */
export const MatchSchema = z.strictObject({
  contains: z.string().optional().describe("The last user message contains this text."),
  regex: z.string().optional().describe("The last user message (its first 65,536 characters) matches this regex: JavaScript syntax without backreferences or lookarounds, run in linear time (RE2); groups fill {{match.N}} / {{match.NAME}}."),
  ignore_case: z.boolean().optional().describe("contains, conversation_contains and regex ignore case."),
  conversation_contains: z.string().optional().describe("Some user message of the conversation (the last one or an earlier one) contains this text: a later turn of a conversation that a marker started."),
  model: z.string().optional().describe("The request's model is exactly this."),
  unknown_model: z
    .boolean()
    .optional()
    .describe("true: the request names a model the script's models: do not list (with no models:, any but its default model), as for a 404 model_not_found; false: a listed model or none."),
  tool_result: z
    .union([z.boolean(), z.string()])
    .optional()
    .describe("true: the last message is a tool result; a name: a result of that tool; false: not a tool result."),
  turn: z.int().nonnegative().optional().describe("The number of assistant messages before this call: 0 on the first call."),
}).describe("Conditions on the request; all given ones must hold. No match: any request.");
