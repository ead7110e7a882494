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
 * Whether a call with this fault (or none) is a call of the clean run, as `count: clean` counts:
 * no fault, or one that answers from the script's entry (latency, answer). A fault that takes
 * the entry's place (error, timeout, hang, break) leaves the entry for the retry, which makes a
 * call the clean run does not have.
 */
export function keepsEntry(fault: ChosenFault | undefined): boolean {
  return fault === undefined || fault.fault.action.kind === "answer";
}

/**
 * Where one episode stands in its fault plan: how many calls each rule's point has seen, and the
 * chaos faults spent. It lives on the episode's journal, so a reset (a new journal) starts the
 * plan over, and a call records under the plan of the episode it started in.
 */
export class FaultState {
  private readonly seen: Uint32Array;
  /** Per rule: 1 once its point arrived (whether it won the call or an earlier rule did). */
  private readonly reached: Uint8Array;
  private chaosSpent = 0;

  constructor(readonly plan: CompiledFaultPlan) {
    this.seen = new Uint32Array(plan.rules.length);
    this.reached = new Uint8Array(plan.rules.length);
  }

  /**
   * The rules whose point never arrived in this episode: a plan that expected them tested
   * nothing there (VerifySession reports them). A rule whose call an earlier rule won counts as
   * reached: it used its one strike, as docs/faults.md says.
   */
  unreached(): CompiledFaultPlan["rules"] {
    return this.plan.rules.filter((_, i) => this.reached[i] === 0);
  }

  /**
   * The fault for call `sequence` (1-based), decided when the call starts, before its entry is
   * selected, from nothing but the declared order of calls: the same calls in the same order get
   * the same faults in every run. Every rule counts the call if it is at the rule's point, even
   * when an earlier rule strikes it, so a rule's "K-th call of step S" means the same whatever
   * other rules the plan has. A `count: clean` rule counts a call at its point only when the
   * call's fault (from any rule or chaos) left the script's entry in place for a retry: its
   * occurrence K is then the K-th call of the clean run.
   */
  choose(session: string, sequence: number, step: string, method: "generate" | "stream", view: RequestView): ChosenFault | undefined {
    const plan = this.plan;
    let chosen: ChosenFault | undefined;
    const atPoint: number[] = [];
    for (let i = 0; i < plan.rules.length; i++) {
      const rule = plan.rules[i]!;
      const at = rule.at;
      let strikes: boolean;
      if (at.kind === "call") strikes = at.call === sequence;
      else if (at.kind === "step" ? at.step === step : at.matcher.test(view) !== null) {
        if (at.clean) {
          // Counted below, once the call's fault is known; a rule strikes once.
          atPoint.push(i);
          strikes = this.reached[i] === 0 && this.seen[i]! + 1 === at.occurrence;
        } else strikes = ++this.seen[i]! === at.occurrence;
      } else strikes = false;
      if (strikes) this.reached[i] = 1;
      if (strikes && !chosen) chosen = { fault: rule.fault, rule: rule.ref, roll: 0 };
    }
    if (!chosen) chosen = this.chaos(session, sequence, step, method);
    if (keepsEntry(chosen)) for (const i of atPoint) this.seen[i]!++;
    return chosen;
  }

  private chaos(session: string, sequence: number, step: string, method: "generate" | "stream"): ChosenFault | undefined {
    const chaos = this.plan.chaos;
    if (!chaos) return undefined;
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
