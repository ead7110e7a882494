import { FinishReason, Role, type GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import { Outcome, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import type { Expectation } from "./expectations.js";
import type { RunnerPlan } from "./matrix-plans.js";
import type { ReportReason } from "./report-types.js";
import type { PlanRun } from "./run-plan.js";

/** The last reply of an episode that answered: what the run ended with. */
export function finalReply(episode: Episode): GenerateResponse | undefined {
  for (let i = episode.calls.length - 1; i >= 0; i--) {
    const c = episode.calls[i]!;
    if (c.outcome === Outcome.OK && c.response) return c.response;
  }
  return undefined;
}

/**
 * A reply as the executor reads it: finish reason, role, content, and each tool call's name and
 * arguments. Ids are left out: the response id and the generated tool-call ids name the session
 * and the call's sequence, which a retry moves.
 */
export function replyText(r: GenerateResponse): string {
  const m = r.message;
  return JSON.stringify({
    finish: FinishReason[r.finishReason],
    content: m?.content ?? "",
    tool_calls: (m?.toolCalls ?? []).map((t) => ({ name: t.name, arguments: t.arguments })),
  });
}

/**
 * How many times each tool side effect ran, as the episode shows it: a tool call is named by its
 * name and arguments (from the replies that asked for it), and it ran once per distinct
 * tool-call id whose result a later request carries (a TOOL message with that tool_call_id).
 * The same id's result sent again (history, a retry, a resumed run) counts once; the same tool
 * and arguments run under a second id (the model asked again and the executor ran it again)
 * counts twice.
 */
export function toolRuns(episode: Episode): Map<string, number> {
  const named = new Map<string, string>();
  for (const c of episode.calls) for (const t of c.response?.message?.toolCalls ?? []) if (t.id) named.set(t.id, `${t.name}(${t.arguments})`);
  const ran = new Map<string, Set<string>>();
  for (const c of episode.calls) {
    for (const m of c.request?.messages ?? []) {
      if (m.role !== Role.TOOL || !m.toolCallId) continue;
      const key = named.get(m.toolCallId) ?? `${m.name || "tool"}#${m.toolCallId}`;
      let ids = ran.get(key);
      if (!ids) ran.set(key, (ids = new Set()));
      ids.add(m.toolCallId);
    }
  }
  return new Map([...ran].map(([k, ids]) => [k, ids.size]));
}

/** The calls after a faulted call on the same step: the executor retried that call. */
function retriedAfterFault(episode: Episode): { step: string; sequence: number } | undefined {
  for (let i = 0; i < episode.calls.length; i++) {
    const c = episode.calls[i]!;
    if (!c.fault || c.outcome === Outcome.OK) continue;
    if (episode.calls.slice(i + 1).some((later) => later.stepId === c.stepId)) return { step: c.stepId, sequence: Number(c.sequence) };
  }
  return undefined;
}

function exitWords(code: number | null): string {
  return code === null ? "killed by a signal" : `exit ${code}`;
}

/**
 * The reasons a plan's run fails its expectation (none: it passed): the exit code, the final
 * reply against the clean run's, retries of a non-retryable fault, and, after a crash, tool side
 * effects that ran more often than in the clean run.
 */
export function judgeRun(plan: RunnerPlan, run: PlanRun, expect: Expectation, clean: Episode | undefined): ReportReason[] {
  const reasons: ReportReason[] = [];
  const last = run.starts[run.starts.length - 1]!;
  if (last.timedOut) reasons.push({ code: "timeout", message: `COMMAND ran past --timeout and was killed (restart ${last.restart})`, detail: last.output });
  else if (!(expect.exit === "any" || (expect.exit === "nonzero" ? last.exitCode !== 0 : last.exitCode === expect.exit))) {
    const want = expect.exit === "nonzero" ? "a nonzero exit (the executor gives up on this fault)" : `exit ${expect.exit}`;
    reasons.push({ code: "exit-code", message: `COMMAND ended with ${exitWords(last.exitCode)}, expected ${want}`, detail: last.output });
  }
  for (const rule of run.crashesMissed)
    reasons.push({ code: "crash-not-reached", message: `the crash at ${rule} never arrived: COMMAND made no call there, so nothing was killed` });
  if (expect.final_reply === "clean" && clean && !last.timedOut) {
    const want = finalReply(clean);
    const got = finalReply(run.episode);
    if (want && !(got && replyText(got) === replyText(want))) {
      reasons.push({
        code: "final-reply",
        message: "the episode's last reply is not the clean run's",
        detail: `clean run: ${replyText(want)}\nthis run:  ${got ? replyText(got) : "no reply at all"}`,
      });
    }
  }
  const retried = retriedAfterFault(run.episode);
  if (expect.retry === "forbidden" && retried) {
    reasons.push({
      code: "retried",
      message: `COMMAND retried after a non-retryable fault: call ${retried.sequence} on step ${JSON.stringify(retried.step)} failed, and a later call asked the same step`,
    });
  }
  if (expect.retry === "required" && !retried && plan.faults.length > 0)
    reasons.push({ code: "not-retried", message: "no call followed the faulted call on its step: COMMAND did not retry" });
  if (clean) {
    const before = toolRuns(clean);
    for (const [tool, n] of toolRuns(run.episode)) {
      if (n > (before.get(tool) ?? 0))
        reasons.push({
          code: "side-effect-twice",
          message: `the tool call ${tool} ran ${n} times (its result came back under ${n} tool-call ids), ${before.get(tool) ?? 0} in the clean run: a side effect ran again (after a restart, or a retry of the whole task)`,
        });
    }
  }
  return reasons;
}
