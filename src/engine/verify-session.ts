import type { CompiledFaultRule, CompiledScript, FaultPoint } from "../script/compiled-script.js";
import type { Session } from "./session.js";

/** A verify report: the limited entries a session has not used up yet, and the plan rules that never struck. */
export interface Verification {
  /** True when every limited entry was used up and every rule of the session's fault plan struck. */
  satisfied: boolean;
  unused: { entry: string; remaining: number; summary: string }[];
  /**
   * The rules of the open episode's fault plan whose point never arrived (`rules[1]`, and where
   * in words): a fault that never struck tested nothing. Empty without a plan, or for chaos.
   */
  unstruck: { rule: string; at: string }[];
  message: string;
}

/** A rule's point in words: `call 3`, `step "plan", occurrence 2 (clean run)`. */
export function pointWords(at: FaultPoint): string {
  if (at.kind === "call") return `call ${at.call}`;
  const where = at.kind === "step" ? (at.step === "" ? "the main list" : `step ${JSON.stringify(at.step)}`) : `calls matching ${at.matcher.summary}`;
  return `${where}, occurrence ${at.occurrence}${at.clean ? " (counting clean calls)" : ""}`;
}

function unstruckOf(rules: readonly CompiledFaultRule[]): Verification["unstruck"] {
  return rules.map((r) => ({ rule: r.ref, at: pointWords(r.at) }));
}

/**
 * Reports the limited entries of a session not used up yet, and the rules of its open episode's
 * fault plan that never struck; a session the stub has not seen (undefined) has used none of
 * `script`'s, and its plan (the script's `faults:`) has struck nowhere.
 */
export function verifySession(session: Session | undefined, script: CompiledScript): Verification {
  const unused: Verification["unused"] = [];
  const cursors = session ? session.allCursors() : [...script.lists.values()].map((list) => ({ list, used: new Uint32Array(list.entries.length) }));
  for (const { list, used } of cursors) {
    list.entries.forEach((e, i) => {
      if (e.limited && used[i]! < e.limit) unused.push({ entry: e.ref, remaining: e.limit - used[i]!, summary: e.summary });
    });
  }
  const unstruck = unstruckOf(session ? (session.episode.faults?.unreached() ?? []) : (script.faults?.rules ?? []));
  const parts: string[] = [];
  if (unused.length > 0)
    parts.push(
      `${unused.length} scripted entr${unused.length === 1 ? "y was" : "ies were"} not used up: ${unused.map((u) => `${u.summary} (${u.remaining} left)`).join("; ")}`,
    );
  if (unstruck.length > 0)
    parts.push(`${unstruck.length} fault rule${unstruck.length === 1 ? "" : "s"} never struck: ${unstruck.map((u) => `${u.rule} at ${u.at}`).join("; ")}`);
  const message =
    parts.length === 0
      ? session?.episode.faults
        ? "every scripted entry was used and every fault rule struck"
        : "every scripted entry was used"
      : parts.join("; ");
  return { satisfied: parts.length === 0, unused, unstruck, message };
}
