import { chaosDraws, chaosKind } from "../shared/chaos-draw.js";
import type { CompiledFault, CompiledFaultPlan, RequestView } from "../script/compiled-script.js";

/** A fault a plan applies to one call, and what the episode records of it. */
export interface ChosenFault {
  fault: CompiledFault;
  /** `rules[2]`, or `chaos`. */
  rule: string;
  /** The chaos roll (0..999999); 0 for a rule. */
  roll: number;
}

/**
 * Where one episode stands in its fault plan: how many calls each rule's point has seen, and the
 * chaos faults spent. It lives on the episode's journal, so a reset (a new journal) starts the
 * plan over, and a call records under the plan of the episode it started in.
 */
export class FaultState {
  private readonly seen: Uint32Array;
  private chaosSpent = 0;

  constructor(readonly plan: CompiledFaultPlan) {
    this.seen = new Uint32Array(plan.rules.length);
  }

  /**
   * The fault for call `sequence` (1-based), decided when the call starts, before its entry is
   * selected, from nothing but the declared order of calls: the same calls in the same order get
   * the same faults in every run. Every rule counts the call if it is at the rule's point, even
   * when an earlier rule strikes it, so a rule's "K-th call of step S" means the same whatever
   * other rules the plan has.
   */
  choose(session: string, sequence: number, step: string, method: "generate" | "stream", view: RequestView): ChosenFault | undefined {
    const plan = this.plan;
    let chosen: ChosenFault | undefined;
    for (let i = 0; i < plan.rules.length; i++) {
      const rule = plan.rules[i]!;
      const at = rule.at;
      let strikes: boolean;
      if (at.kind === "call") strikes = at.call === sequence;
      else if (at.kind === "step" ? at.step === step : at.matcher.test(view) !== null) strikes = ++this.seen[i]! === at.occurrence;
      else strikes = false;
      if (strikes && !chosen) chosen = { fault: rule.fault, rule: rule.ref, roll: 0 };
    }
    if (chosen || !plan.chaos) return chosen;
    const chaos = plan.chaos;
    if (this.chaosSpent >= chaos.budget) return undefined;
    if (chaos.steps && !chaos.steps.has(step)) return undefined;
    if (chaos.methods && !chaos.methods.has(method)) return undefined;
    const { roll, pick } = chaosDraws(chaos.seed, session, sequence, step, chaos.errors.length);
    const kind = chaosKind(roll, chaos.ppm);
    if (kind === undefined) return undefined;
    this.chaosSpent++;
    const fault = kind === "error" ? chaos.errors[pick]! : chaos[kind];
    return { fault, rule: "chaos", roll };
  }
}
