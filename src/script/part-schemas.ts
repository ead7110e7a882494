import { z } from "zod";
import { maxUint32 } from "./script-limits.js";
import { codeNames, type CodeName } from "../shared/status-code.js";

/*
 * The pieces of the script format that fault plans speak too (a duration, a latency, a status,
 * a stream break, a matcher): one definition, so a fault reads exactly like the script's own
 * failure, and script-schema.ts and fault-plan-schema.ts import them without importing each other.
 */

const durationText = /^\d+(\.\d+)?\s*(ms|s|m)$/;

/** A declared wait: whole milliseconds, or a text like `250ms`, `1.5s`, `2m`. */
export const DurationSchema = z
  .union([z.int().nonnegative(), z.string().regex(durationText, { error: "expected a duration like 250ms, 1.5s or 2m" })], {
    error: "expected a duration: a whole number of milliseconds, or a text like 250ms, 1.5s or 2m",
  })
  .describe("A declared wait: whole milliseconds, or a text like 250ms, 1.5s, 2m.");

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

/** The names a script may end a call with: every status but OK. */
type ErrorCodeName = Exclude<CodeName, "OK">;
// Typed as the names themselves, so a script or plan written as an object in TypeScript
// (ScriptObject, FaultPlanObject) refuses `code: "UNAVAILIBLE"` at compile time.
const errorCodeNames = codeNames.filter((n): n is ErrorCodeName => n !== "OK") as [ErrorCodeName, ...ErrorCodeName[]];

/** A status to end a call with. */
export const ErrorSchema = z
  .strictObject({
    code: z
      .union([z.enum(errorCodeNames), z.int().min(1).max(16)], {
        error: `expected a gRPC status code name (${codeNames.slice(1).join(", ")}) or a number from 1 to 16`,
      })
      .describe("gRPC status code, by name (UNAVAILABLE) or number (14)."),
    message: z.string().optional().describe("Status message the client sees (default: scripted error at <entry>)."),
    trailers: z
      .record(z.string().regex(metadataKey, { error: "trailer names are lowercase and start with a letter, like retry-after-ms" }), z.string())
      .optional()
      .describe(
        "Trailing metadata, in this order (e.g. retry-after-ms): printable ASCII values; a name ending in -bin takes base64; no grpc-* or HTTP connection names.",
      ),
  })
  .describe("End the call with this gRPC status.");

/** A scripted stream break. */
export const BreakSchema = z
  .strictObject({
    after_chunks: z.int().nonnegative().max(maxUint32).describe("Content chunks delivered before the break (at most the chunks the reply has)."),
    then: z.enum(["error", "hang", "drop"]).describe("error: end with a status; hang: wait for the caller's deadline; drop: reset the stream."),
    error: ErrorSchema.optional().describe("With then: error (default UNAVAILABLE)."),
  })
  .describe("Break the stream after N chunks.");

/** Conditions on the request; all given ones must hold. */
export const MatchSchema = z
  .strictObject({
    contains: z.string().optional().describe("The last user message contains this text."),
    regex: z
      .string()
      .optional()
      .describe(
        "The last user message (its first 65,536 characters) matches this regex: JavaScript syntax without backreferences or lookarounds, run in linear time (RE2); groups fill {{match.N}} / {{match.NAME}}.",
      ),
    ignore_case: z.boolean().optional().describe("contains, conversation_contains and regex ignore case."),
    conversation_contains: z
      .string()
      .optional()
      .describe(
        "Some user message of the conversation (the last one or an earlier one) contains this text: a later turn of a conversation that a marker started.",
      ),
    model: z.string().optional().describe("The request's model is exactly this."),
    unknown_model: z
      .boolean()
      .optional()
      .describe(
        "true: the request names a model the script's models: do not list (with no models:, any but its default model), as for a 404 model_not_found; false: a listed model or none.",
      ),
    tool_result: z
      .union([z.boolean(), z.string()])
      .optional()
      .describe("true: the last message is a tool result; a name: a result of that tool; false: not a tool result."),
    turn: z.int().nonnegative().optional().describe("The number of assistant messages before this call: 0 on the first call."),
  })
  .describe("Conditions on the request; all given ones must hold. No match: any request.");

const sha256Hex = /^[0-9a-f]{64}$/;

/** A recorded text: the text itself, or, for a long one, its SHA-256 and how it begins. */
const RecordedTextSchema = z
  .union(
    [
      z.string(),
      z.strictObject({
        sha256: z
          .string()
          .regex(sha256Hex, { error: "expected the text's SHA-256 as 64 lowercase hex digits" })
          .describe("The SHA-256 of the text's UTF-8 bytes, in lowercase hex."),
        begins: z.string().optional().describe("How the text begins, for people and for the replay's diff; not compared."),
      }),
    ],
    { error: "expected a text, or a mapping {sha256, begins} for a long one" },
  )
  .describe("A text the request must hold exactly: as written, or a long one by its SHA-256 ({sha256, begins}).");

/**
 * What a recorded entry remembers of the request it answered (`modelstub record`, `script
 * from-episode`): readably, or as the digest of the canonical request. A replay refuses a
 * request that differs (docs/record.md).
 */
export const RequestMatchSchema = z
  .strictObject({
    digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, { error: "expected sha256: and 64 lowercase hex digits, as record --match digest writes it" })
      .optional()
      .describe("sha256:HEX of the canonical request (record --match digest); alone, in place of the readable keys."),
    last_user: RecordedTextSchema.optional().describe("The last user message's text (left out: the request has none, or an empty one)."),
    tool_results: z
      .array(
        z.strictObject({
          tool: z.string().describe("The tool the result answers (the name of the call its id points to, else its own name)."),
          content: RecordedTextSchema.describe("The result's text."),
        }),
      )
      .optional()
      .describe("The tool results after the last assistant message, in order (left out: none)."),
    tools: z.array(z.string()).optional().describe("The names of the tools offered, in order (left out: none)."),
  })
  .describe("The request this entry was recorded for: a replay refuses a request that differs, as its replay mode says.");

/** How a replay holds requests to the entries' recorded `request:`. */
export const ReplayModeSchema = z
  .enum(["strict", "unordered", "order-only"])
  .describe(
    "strict (default): each request must match the entry that answers it, the next in its list; unordered: the first unused entry whose request matches answers; order-only: requests are not compared.",
  );
