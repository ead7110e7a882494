import { parse as parseYaml } from "yaml";
import { z } from "zod";
import type { RunnerPlan } from "./matrix-plans.js";

/**
 * What a plan's run must show, by kind or by plan id (an `--expect FILE`), over defaults:
 * - `exit`: COMMAND's exit code: `0`, any number, `nonzero`, or `any`;
 * - `final_reply`: `clean` when the episode's last answered reply must be the clean run's
 *   (bytes of the GenerateResponse), `any` otherwise;
 * - `retry`: `forbidden` when no call may follow a faulted call on the same step (the executor
 *   must give up on a non-retryable code), `required` when one must, `any`.
 */
export interface Expectation {
  exit: number | "nonzero" | "any";
  final_reply: "clean" | "any";
  retry: "required" | "forbidden" | "any";
}

const ExpectationSchema = z.strictObject({
  exit: z.union([z.int().min(0).max(255), z.enum(["nonzero", "any"])]).optional(),
  final_reply: z.enum(["clean", "any"]).optional(),
  retry: z.enum(["required", "forbidden", "any"]).optional(),
});

/** An --expect file: expectations by kind, and by plan id (which win). */
export const ExpectationsSchema = z.strictObject({
  kinds: z.record(z.string(), ExpectationSchema).optional(),
  plans: z.record(z.string(), ExpectationSchema).optional(),
});

export type ExpectationsInput = z.infer<typeof ExpectationsSchema>;

/** Kinds an executor is expected to recover from by retrying (or, for crash, by resuming). */
export const retryableKinds: ReadonlySet<string> = new Set(["unavailable", "timeout", "hang", "break", "crash", "chaos", "clean"]);

/** The defaults: retryable kinds exit 0 and end as the clean run; the others may fail, and must not retry. */
export function defaultExpectation(kind: string): Expectation {
  return retryableKinds.has(kind) ? { exit: 0, final_reply: "clean", retry: "any" } : { exit: "nonzero", final_reply: "any", retry: "forbidden" };
}

/**
 * The expectation of a plan: the defaults of its kinds (a pair with a non-retryable kind takes
 * that kind's), then the file's entries for those kinds, then its entry for the plan's id.
 */
export function expectationOf(plan: RunnerPlan, given: ExpectationsInput = {}): Expectation {
  const kinds = plan.faults.length > 0 ? plan.faults.map((f) => f.kind) : ["clean"];
  const hard = kinds.find((k) => !retryableKinds.has(k));
  const kind = hard ?? kinds[0]!;
  return { ...defaultExpectation(kind), ...given.kinds?.[kind], ...given.plans?.[plan.id] };
}

/** Parses an --expect file's text (YAML or JSON); throws an Error naming the field. */
export function parseExpectations(text: string, file: string): ExpectationsInput {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw new Error(`cannot parse ${file}: ${(err as Error).message}`);
  }
  const r = ExpectationsSchema.safeParse(value ?? {});
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new Error(
      `${file}: ${issue.path.join(".") || "(root)"}: ${issue.message} (expected {kinds: {KIND: {exit, final_reply, retry}}, plans: {ID: {...}}})`,
    );
  }
  return r.data;
}
