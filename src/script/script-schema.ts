import { z } from "zod";
import { maxTokenCount, maxUint32 } from "./script-limits.js";
import { BreakSchema, ErrorSchema, LatencySchema, MatchSchema, ReplayModeSchema, RequestMatchSchema } from "./part-schemas.js";
import { FaultPlanSchema } from "./fault-plan-schema.js";
import { embedLimits } from "../shared/embed-limits.js";

export { BreakSchema, DurationSchema, ErrorSchema, LatencySchema, MatchSchema, ReplayModeSchema, RequestMatchSchema } from "./part-schemas.js";

/*
 * The script format, once. The loader validates with it, `modelstub schema` prints the JSON
 * Schema derived from it, and the compiler reads its output type. Semantic checks that zod
 * cannot express (regexes compile, template variables exist, one action per entry) live in
 * compile-script.ts and the compile-*.ts files it calls, and report at the same paths.
 */

/** How a reply is cut into stream chunks when no explicit chunks are given. */
export const ChunkingSchema = z
  .union([z.enum(["words", "none"]), z.strictObject({ chars: z.int().positive().describe("Characters (code points) per chunk.") })], {
    error: "expected a chunking rule: words, none, or a mapping like {chars: 8}",
  })
  .describe("How the text is cut into stream chunks: words (default; each word with its following space), none (one chunk), or {chars: N}.");

/** One tool call of a reply. */
export const ToolCallSchema = z
  .strictObject({
    name: z.string().min(1).describe("The tool's name."),
    arguments: z
      .union([z.string(), z.record(z.string(), z.unknown())], {
        error: "expected the arguments as a mapping (written as JSON for you) or as a JSON text",
      })
      .optional()
      .describe("A mapping (serialized as JSON, templates filled in its strings) or a JSON text."),
    id: z.string().min(1).optional().describe("Fixed id; by default call-<session>-<sequence>-<index>."),
  })
  .describe("A tool call of the reply.");

const FinishReasonSchema = z.enum(["stop", "length", "tool_calls", "content_filter"]).describe("Why the reply ended.");

const ReplyObjectSchema = z.strictObject({
  text: z.string().optional().describe("The reply's text; a template ({{last_user}}, {{match.1}}, ...). Default: the chunks joined, or empty."),
  text_file: z
    .string()
    .min(1)
    .optional()
    .describe(
      "A file holding the reply's text (read as `text` is), relative to the script's folder: for a text too long for the script (up to 1 MiB). Only in a script loaded from a file.",
    ),
  tool_calls: z.array(ToolCallSchema).optional().describe("Tool calls the reply makes, in order."),
  finish_reason: FinishReasonSchema.optional().describe("Default: tool_calls when the reply calls tools, else stop."),
  usage: z
    .strictObject({
      input_tokens: z
        .int()
        .nonnegative()
        .max(maxTokenCount)
        .optional()
        .describe("Default: the request's message contents and tool call names and arguments, by the token rule."),
      output_tokens: z
        .int()
        .nonnegative()
        .max(maxTokenCount)
        .optional()
        .describe("Default: the reply's text and tool call names and arguments, by the token rule."),
    })
    .optional()
    .describe(
      "Token counts; a count left out follows the token rule: each text counts its UTF-8 bytes / 4, rounded up on its own, and a count is the sum of its texts'.",
    ),
  chunks: z.array(z.string()).min(1).optional().describe("Explicit stream chunks of the text; they must join to the text (or give chunks alone)."),
  chunking: ChunkingSchema.optional(),
});

/** A reply: its text, or a mapping with text, tool calls, finish reason, usage and chunking. */
export const ReplySchema = z
  .union([z.string().describe("The reply's text; a template."), ReplyObjectSchema], {
    error: "expected a reply: a text, or a mapping with text, tool_calls, finish_reason, usage, chunks or chunking",
  })
  .describe("Answer with this: a text, or {text, tool_calls, finish_reason, usage, chunks, chunking}.");

/** One script entry: an optional matcher, a limit, latency, and exactly one action. */
export const EntrySchema = z
  .strictObject({
    name: z.string().optional().describe("A label shown in logs and verify output."),
    match: MatchSchema.optional(),
    times: z.int().positive().max(maxUint32).optional().describe("Uses before the entry is spent (default 1)."),
    repeat: z.boolean().optional().describe("true: never spent."),
    latency: LatencySchema.optional(),
    reply: ReplySchema.optional(),
    error: ErrorSchema.optional().describe("Answer with this gRPC status instead of a reply."),
    timeout: z.literal(true).optional().describe("Answer DEADLINE_EXCEEDED after the latency."),
    hang: z.literal(true).optional().describe("Never answer: the caller's deadline or cancel ends the call."),
    break: BreakSchema.optional().describe("With reply: break the stream after N chunks."),
    request: RequestMatchSchema.optional(),
  })
  .describe("One scripted answer.");

const OnExhaustedSchema = z
  .enum(["fail", "repeat-last", "cycle"])
  .describe("When every entry is spent: fail (default; FAILED_PRECONDITION), repeat-last (the last entry never runs out) or cycle (all entries start over).");

/** A list of entries, or a mapping with the entries and what happens when they run out. */
export const ListSchema = z
  .union(
    [
      z.array(EntrySchema),
      z.strictObject({
        on_exhausted: OnExhaustedSchema.optional(),
        entries: z.array(EntrySchema).describe("The entries, tried in order: the first with uses left that matches answers."),
      }),
    ],
    { error: "expected a list of entries, or a mapping with entries and on_exhausted" },
  )
  .describe("A list of entries, or {on_exhausted, entries}.");

/** A model the script declares, for ListModels and the HTTP model lists. */
export const ModelSchema = z
  .strictObject({
    id: z.string().min(1).describe("The model id clients send."),
    name: z.string().optional().describe("Display name (default: the id)."),
    owned_by: z.string().optional().describe("Owner shown in model lists (default modelstub)."),
    context_length: z.int().nonnegative().max(maxUint32).optional().describe("Context window in tokens (default 0: unknown)."),
    input_modalities: z.array(z.string()).optional().describe("Default [text]."),
    output_modalities: z.array(z.string()).optional().describe("Default [text]."),
    prompt_price: z.string().optional().describe("Price per prompt token, as a decimal text (default 0)."),
    completion_price: z.string().optional().describe("Price per completion token, as a decimal text (default 0)."),
  })
  .describe("A model the script declares, for ListModels and model lists.");

/** A vector for one input text of POST /v1/embeddings (docs/embeddings.md). */
export const EmbeddingSchema = z
  .strictObject({
    input: z.string().describe("The input text this vector answers, matched exactly: every character, case and space."),
    vector: z
      .array(z.number())
      .min(1)
      .max(embedLimits.dimensions)
      .describe("The vector: normalized to unit length when served, and padded with zeros to the request's dimensions. Not all zeros."),
  })
  .describe("The vector an embeddings request gets for one input text.");

/** The whole script. */
export const ScriptSchema = z
  .strictObject({
    version: z.literal(1).optional().describe("Format version; 1."),
    name: z.string().optional().describe("The script's name (default: its file name)."),
    models: z.array(ModelSchema).optional().describe("Models to list; the first is the default model."),
    defaults: z
      .strictObject({
        latency: LatencySchema.optional(),
        chunking: ChunkingSchema.optional(),
        on_exhausted: OnExhaustedSchema.optional(),
        model: z.string().optional().describe("Model named in replies when the request names none."),
      })
      .optional()
      .describe("Defaults for every entry and list."),
    replay: z
      .strictObject({ mode: ReplayModeSchema.optional() })
      .optional()
      .describe("How a replay holds requests to the entries' recorded `request:` (serve --replay-mode overrides it)."),
    entries: ListSchema.optional().describe("The main list: requests without a step id."),
    steps: z.record(z.string(), ListSchema).optional().describe("Step-keyed lists: requests with that step id."),
    embeddings: z
      .array(EmbeddingSchema)
      .optional()
      .describe("Vectors for POST /v1/embeddings by exact input text; any other input gets the vector derived from its text (docs/embeddings.md)."),
    faults: FaultPlanSchema.optional().describe("A fault plan every session starts with (docs/faults.md); SetFaultPlan replaces it, ResetSession restores it."),
  })
  .describe("A modelstub script.");

/** A script as validated by the schema, before compilation. */
export type ScriptInput = z.infer<typeof ScriptSchema>;
export type EntryInput = z.infer<typeof EntrySchema>;
export type ListInput = z.infer<typeof ListSchema>;
export type ErrorInput = z.infer<typeof ErrorSchema>;
export type BreakInput = z.infer<typeof BreakSchema>;
export type LatencyInput = z.infer<typeof LatencySchema>;
export type ChunkingInput = z.infer<typeof ChunkingSchema>;
export type ReplyInput = z.infer<typeof ReplySchema>;
export type RequestMatchInput = z.infer<typeof RequestMatchSchema>;
export type ReplayMode = z.infer<typeof ReplayModeSchema>;
export type EmbeddingInput = z.infer<typeof EmbeddingSchema>;
