import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import type { ChosenFault } from "./choose-fault.js";
import type { CompiledEntry, RequestView } from "../script/compiled-script.js";
import type { CallContext } from "./call-context.js";
import { statusEnding, type Ending } from "./ending.js";
import { runEntry } from "./run-entry.js";
import { breakEnding, runReply } from "./run-reply.js";
import { Code } from "../shared/status-code.js";

/**
 * Runs a call a fault plan strikes. An error, timeout or hang answers in place of the script:
 * no entry is selected, so the script's cursor stays where it was and the caller's retry gets
 * the answer the failed call would have had. A break streams the reply the script would give
 * (looked at, not used up, for the same reason) and breaks; a latency or "answer" fault lets the
 * script answer as usual, its entry used, with the fault's waits in place of the entry's.
 * The call's context selects and renders as the call would, and learns which entry answered.
 */
export async function runFault(c: CallContext, view: RequestView, chosen: ChosenFault): Promise<Ending> {
  const { input, x } = c;
  const { fault, rule } = chosen;
  const action = fault.action;
  const firstByteMs = fault.latency?.firstByteMs;
  switch (action.kind) {
    case "error":
      await x.wait(firstByteMs ?? 0);
      return statusEnding(action.status);
    case "timeout": {
      await x.wait(firstByteMs ?? 0);
      const status = { code: Code.DEADLINE_EXCEEDED, message: `timeout injected by the fault plan (${rule})`, trailers: [] };
      return { result: { kind: "status", status }, outcome: Outcome.TIMED_OUT, status };
    }
    case "hang":
      await x.wait(firstByteMs ?? 0);
      return x.hang();
  }
  const selection = c.select(view, action.kind === "answer");
  if ("status" in selection) {
    if (action.kind === "answer") return statusEnding(selection.status);
    await x.wait(firstByteMs ?? 0);
    return breakEnding(action.brk, x, undefined);
  }
  const entry = selection.entry;
  c.answeredBy(entry);
  const timed: CompiledEntry = {
    ...entry,
    firstByteMs: firstByteMs ?? entry.firstByteMs,
    perChunkMs: fault.latency?.perChunkMs ?? entry.perChunkMs,
  };
  const rendered = c.render(view, entry, selection.captures);
  if (action.kind === "answer") return runEntry(timed, rendered, input, x);
  if (entry.action.kind !== "reply" || !rendered) {
    await x.wait(timed.firstByteMs);
    return breakEnding(action.brk, x, undefined);
  }
  return runReply({ ...timed, action: { kind: "reply", reply: entry.action.reply, brk: action.brk } }, rendered, input, x);
}
