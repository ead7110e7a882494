import { createHash } from "node:crypto";
import { FaultKind } from "../../gen/modelstub/v1/episode_pb.js";
import { ratePpm } from "../shared/chaos-draw.js";
import { stepIdPattern } from "../shared/step-id.js";
import { checkStatus } from "./check-status.js";
import { compileBreak, compileStatus } from "./compile-entry.js";
import { compileLatency } from "./compile-latency.js";
import { compileMatch } from "./compile-matcher.js";
import type { CompiledChaos, CompiledFault, CompiledFaultPlan, CompiledFaultRule, FaultPoint } from "./compiled-script.js";
import type { ChaosInput, FaultPlanInput, FaultRuleInput } from "./fault-plan-schema.js";
import type { LatencyInput } from "./script-schema.js";
import type { Report } from "./report.js";

type Path = (string | number)[];

/**
 * The plan's canonical JSON: keys sorted at every level, no spaces. Its SHA-256 is the plan's
 * digest in the episode, so the same plan written in YAML or JSON, in a file or in a script's
 * `faults:`, in any key order, has one identity.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function latencyOf(l: LatencyInput | undefined, path: Path, report: Report): CompiledFault["latency"] {
  if (l === undefined) return undefined;
  // NaN marks a wait the latency leaves out: the entry's stays.
  const { first, per } = compileLatency(l, { first: NaN, per: NaN }, path, report);
  return { firstByteMs: Number.isNaN(first) ? undefined : first, perChunkMs: Number.isNaN(per) ? undefined : per };
}

function pointOf(at: FaultRuleInput["at"], path: Path, report: Report): FaultPoint | undefined {
  const given = (["call", "step", "match"] as const).filter((k) => at[k] !== undefined);
  if (given.length !== 1) {
    report(
      path,
      given.length === 0 ? "at names no point: expected one of call, step or match" : `at names ${given.length} points (${given.join(", ")}): expected one`,
      "write {call: 3}, {step: plan, occurrence: 2} or {match: {contains: weather}}",
      given.length > 1 ? { key: given[1]! } : undefined,
    );
    return undefined;
  }
  const occurrence = at.occurrence ?? 1;
  if (at.call !== undefined) {
    if (at.occurrence !== undefined)
      report(path, "occurrence goes with step or match, not with call", "call N already names one call: remove occurrence", { key: "occurrence" });
    if (at.count !== undefined) report(path, "count goes with step or match, not with call", "call N counts every call: remove count", { key: "count" });
    return { kind: "call", call: at.call };
  }
  if (at.step !== undefined) {
    if (at.step !== "" && !stepIdPattern.test(at.step))
      report(
        [...path, "step"],
        `step id ${JSON.stringify(at.step)} cannot be sent: it has characters outside A-Z a-z 0-9 . _ : / - or is longer than 128`,
        'use a step id of the script, or "" for the main list',
      );
    return { kind: "step", step: at.step, occurrence, clean: at.count === "clean" };
  }
  const compiled = compileMatch(at.match!, [...path, "match"], report);
  return compiled && { kind: "match", matcher: compiled.matcher, occurrence, clean: at.count === "clean" };
}

function ruleOf(r: FaultRuleInput, i: number, path: Path, report: Report): CompiledFaultRule | undefined {
  const ref = `rules[${i}]`;
  const faults = (["error", "timeout", "hang", "break", "answer"] as const).filter((k) => r[k] !== undefined);
  if (faults.length > 1) {
    report(path, `the rule has ${faults.length} faults (${faults.join(", ")}): expected one`, "a rule applies one fault: split it into one rule per fault", {
      key: faults[1]!,
    });
    return undefined;
  }
  if (faults.length === 0 && r.latency === undefined) {
    report(
      path,
      "the rule has no fault: expected one of error, timeout, hang, break, answer or latency",
      "add `error: {code: UNAVAILABLE}`, `timeout: true`, `hang: true`, `break: {after_chunks: 1, then: drop}` or `latency: 2s`",
    );
    return undefined;
  }
  const at = pointOf(r.at, [...path, "at"], report);
  const latency = latencyOf(r.latency, [...path, "latency"], report);
  const kind = faults[0];
  let fault: CompiledFault;
  if (kind === "error") {
    checkStatus(r.error!, [...path, "error"], report);
    fault = { action: { kind: "error", status: compileStatus(r.error!, `fault injected by ${ref}`) }, latency, kind: FaultKind.ERROR };
  } else if (kind === "timeout") fault = { action: { kind: "timeout" }, latency, kind: FaultKind.TIMEOUT };
  else if (kind === "hang") fault = { action: { kind: "hang" }, latency, kind: FaultKind.HANG };
  else if (kind === "break")
    fault = { action: { kind: "break", brk: compileBreak(r.break!, [...path, "break"], report, ref) }, latency, kind: FaultKind.BREAK };
  else fault = { action: { kind: "answer" }, latency, kind: kind === "answer" ? FaultKind.ANSWER : FaultKind.LATENCY };
  return at ? { index: i, ref, at, fault } : undefined;
}

const chaosKinds = ["error", "timeout", "hang", "break", "latency"] as const;

function seedOf(seed: number | string, path: Path, report: Report): bigint {
  const value = BigInt(seed);
  if (value <= 0xffffffffffffffffn) return value;
  report(path, `the seed ${seed} is larger than 2^64-1 (18446744073709551615)`, "use a seed from 0 to 18446744073709551615");
  return 0n;
}

function chaosOf(c: ChaosInput, path: Path, report: Report): CompiledChaos {
  const ppm = chaosKinds.map((k) => {
    const rate = c.rates[k] ?? 0;
    const parts = ratePpm(rate);
    if (Math.abs(parts - rate * 1e6) > 1e-6)
      report([...path, "rates", k], `the rate ${rate} has more than 6 decimals`, `rates are counted in millionths: use ${parts / 1e6}`);
    return parts;
  });
  const total = ppm.reduce((a, b) => a + b, 0);
  if (total > 1_000_000)
    report([...path, "rates"], `the rates sum to ${total / 1e6}, more than 1`, "each call draws one kind at most: lower the rates so they sum to 1 or less");
  const errors = (c.errors ?? [{ code: "UNAVAILABLE" as const }]).map((e, i): CompiledFault => {
    if (c.errors) checkStatus(e, [...path, "errors", i], report);
    return { action: { kind: "error", status: compileStatus(e, "fault injected by chaos") }, latency: undefined, kind: FaultKind.ERROR };
  });
  const brk = compileBreak(c.break ?? { after_chunks: 1, then: "error" }, [...path, "break"], report, "chaos");
  const latency = latencyOf(c.latency ?? "1s", [...path, "latency"], report);
  return {
    seed: seedOf(c.seed, [...path, "seed"], report),
    ppm,
    errors,
    timeout: { action: { kind: "timeout" }, latency: undefined, kind: FaultKind.TIMEOUT },
    hang: { action: { kind: "hang" }, latency: undefined, kind: FaultKind.HANG },
    break: { action: { kind: "break", brk }, latency: undefined, kind: FaultKind.BREAK },
    latency: { action: { kind: "answer" }, latency, kind: FaultKind.LATENCY },
    budget: c.budget ?? Infinity,
    steps: c.scope?.steps ? new Set(c.scope.steps) : undefined,
    methods: c.scope?.methods ? new Set(c.scope.methods.map((m) => (m === "generate" ? "generate" : "stream"))) : undefined,
  };
}

/**
 * Compiles a validated fault plan; problems go to `report` at their paths under `at` (`[]` for a
 * plan file, `["faults"]` for a script's section). `fallbackName` names a plan without `name:`.
 */
export function compileFaultPlan(input: FaultPlanInput, at: Path, fallbackName: string, report: Report): CompiledFaultPlan {
  const steps = compileFaultPlanInSteps(input, at, fallbackName, report);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** compileFaultPlan, pausing after each rule (as compileScriptInSteps does after each entry). */
export function* compileFaultPlanInSteps(input: FaultPlanInput, at: Path, fallbackName: string, report: Report): Generator<void, CompiledFaultPlan> {
  if ((input.rules === undefined) === (input.chaos === undefined)) {
    report(
      at,
      input.rules === undefined ? "the plan has neither rules nor chaos: expected one of them" : "the plan has both rules and chaos: expected one of them",
      "write `rules:` with faults at chosen points, or `chaos:` with a seed and rates",
      input.rules === undefined ? undefined : { key: "chaos" },
    );
  }
  const rules: CompiledFaultRule[] = [];
  const inputRules = input.rules ?? [];
  for (let i = 0; i < inputRules.length; i++) {
    const rule = ruleOf(inputRules[i]!, i, [...at, "rules", i], report);
    if (rule) rules.push(rule);
    yield;
  }
  const chaos = input.chaos && input.rules === undefined ? chaosOf(input.chaos, [...at, "chaos"], report) : undefined;
  return { name: input.name ?? fallbackName, digest: createHash("sha256").update(canonicalJson(input)).digest("hex"), rules, chaos };
}
