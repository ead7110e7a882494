import { z } from "zod";
import { maxUint32 } from "./script-limits.js";
import { BreakSchema, ErrorSchema, LatencySchema, MatchSchema } from "./part-schemas.js";

/*
 * The fault plan format, once: a plan file (`modelstub session faults`, SetFaultPlan, the library)
 * and a script's `faults:` section are validated by this schema and compiled by
 * compile-fault-plan.ts. A fault reads like the script's own failures (error, timeout, hang,
 * latency, break), so nothing new is learnt to write one. docs/faults.md is the user's page.
 */

const occurrence = z.int().positive().max(maxUint32).optional().describe("Which of the calls at that point: 1 (default) for the first.");

/** Where a rule strikes: call N of the episode, the K-th call of a step, or the K-th call that matches. */
export const FaultAtSchema = z
  .strictObject({
    call: z.int().positive().max(maxUint32).optional().describe("Call N of the session's episode (its sequence number, from 1)."),
    step: z.string().optional().describe('Calls with this step id ("" for the main list); with occurrence, the K-th of them.'),
    match: MatchSchema.optional().describe("Calls whose request matches (the script's match conditions); with occurrence, the K-th of them."),
    occurrence,
    count: z
      .enum(["all", "clean"])
      .optional()
      .describe(
        "With step or match: which calls the occurrence counts. all (default): every call, retries included. clean: only calls no fault struck, so occurrence K is the K-th call of the clean run.",
      ),
  })
  .describe("Where the rule strikes: {call: N}, {step: S, occurrence: K} or {match: {...}, occurrence: K}.");

/** One rule of a plan: a point, and the fault applied there. */
export const FaultRuleSchema = z
  .strictObject({
    at: FaultAtSchema,
    error: ErrorSchema.optional().describe("End the call with this gRPC status."),
    timeout: z.literal(true).optional().describe("Answer DEADLINE_EXCEEDED (after latency, if given)."),
    hang: z.literal(true).optional().describe("Never answer: the caller's deadline or cancel ends the call."),
    break: BreakSchema.optional().describe("Stream the script's reply and break after N chunks (error, hang or drop)."),
    answer: z.literal(true).optional().describe("Answer as the script says (with latency, if given)."),
    latency: LatencySchema.optional().describe(
      "Declared latency of the faulted call, in place of the entry's; alone, it means latency and then the script's answer.",
    ),
  })
  .describe("A fault at one point of the episode.");

const rate = z.number().min(0).max(1).describe("Probability per call in scope, 0 to 1, at most 6 decimals.");

/** A plan drawn from a seed: rates per failure kind, a budget, a scope. */
export const ChaosSchema = z
  .strictObject({
    seed: z
      .union(
        [
          z.int().nonnegative().max(Number.MAX_SAFE_INTEGER),
          z.string().regex(/^\d{1,20}$/, { error: "expected the seed as a whole number, or a decimal text up to 18446744073709551615" }),
        ],
        {
          error: "expected the seed as a whole number (0 to 2^53-1), or a decimal text up to 18446744073709551615",
        },
      )
      .describe("The seed: a whole number, or a decimal text for seeds past 2^53 (at most 2^64-1)."),
    rates: z
      .strictObject({ error: rate.optional(), timeout: rate.optional(), hang: rate.optional(), break: rate.optional(), latency: rate.optional() })
      .describe("Rates per failure kind (left out: 0); they sum to at most 1."),
    errors: z.array(ErrorSchema).min(1).optional().describe("Statuses the error kind picks from, by the second draw (default [{code: UNAVAILABLE}])."),
    latency: LatencySchema.optional().describe("The latency kind's latency (default 1s before the first byte)."),
    break: BreakSchema.optional().describe("The break kind's break (default: after 1 chunk, then error UNAVAILABLE)."),
    budget: z.int().positive().max(maxUint32).optional().describe("At most this many faults per episode."),
    scope: z
      .strictObject({
        steps: z.array(z.string()).min(1).optional().describe('Only calls with these step ids ("" for the main list).'),
        methods: z
          .array(z.enum(["generate", "generate_stream"]))
          .min(1)
          .optional()
          .describe("Only calls of these methods."),
      })
      .optional()
      .describe("Only calls in scope draw a fault."),
  })
  .describe("A plan drawn from a seed: the same seed gives the same faults, in any language (docs/faults.md gives the algorithm).");

/** A fault plan: rules at chosen points, or chaos from a seed. */
export const FaultPlanSchema = z
  .strictObject({
    version: z.literal(1).optional().describe("Format version; 1."),
    name: z.string().optional().describe("The plan's name, in the episode (default: the file's name)."),
    rules: z.array(FaultRuleSchema).optional().describe("Faults at chosen points; when two strike the same call, the first wins."),
    chaos: ChaosSchema.optional(),
  })
  .describe("A fault plan: `rules` at chosen points, or `chaos` from a seed.");

export type FaultPlanInput = z.infer<typeof FaultPlanSchema>;
export type FaultRuleInput = z.infer<typeof FaultRuleSchema>;
export type ChaosInput = z.infer<typeof ChaosSchema>;
