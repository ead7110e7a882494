import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallInput } from "./call-input.js";
import type { ChosenFault } from "./choose-fault.js";
import type { CompiledEntry } from "../script/compiled-script.js";
import { statusEnding, type Ending } from "./ending.js";
import { executeEntry } from "./execute-entry.js";
import type { Execution } from "./execution.js";
import type { RenderedReply } from "./render-reply.js";
import { breakEnding, runReply } from "./run-reply.js";
import type { Selection } from "./select-entry.js";
import { Code } from "../shared/status-code.js";

/**
 * Runs a call a fault plan strikes. An error, timeout or hang answers in place of the script:
 * no entry is selected, so the script's cursor stays where it was and the caller's retry gets
 * the answer the failed call would have had. A break streams the reply the script would give
 * (looked at, not used up, for the same reason) and breaks; a latency or "answer" fault lets the
 * script answer as usual, its entry used, with the fault's waits in place of the entry's.
 * `select(consume)` selects as the call would; `render` renders an entry's reply; `onEntry`
 * learns which entry answered (before any wait, so a call cut off still records it).
 */
export async function runFault(
  chosen: ChosenFault,
  select: (consume: boolean) => Selection,
  render: (entry: CompiledEntry, captures: RegExpExecArray | null) => RenderedReply | undefined,
  onEntry: (entry: CompiledEntry) => void,
  input: CallInput,
  x: Execution,
): Promise<Ending> {
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
  const selection = select(action.kind === "answer");
  if ("status" in selection) {
    if (action.kind === "answer") return statusEnding(selection.status);
    await x.wait(firstByteMs ?? 0);
    return breakEnding(action.brk, x, undefined);
  }
  const entry = selection.entry;
  onEntry(entry);
  const timed: CompiledEntry = {
    ...entry,
    firstByteMs: firstByteMs ?? entry.firstByteMs,
    perChunkMs: fault.latency?.perChunkMs ?? entry.perChunkMs,
  };
  if (action.kind === "answer") return executeEntry(timed, render(entry, selection.captures), input, x);
  if (entry.action.kind !== "reply") {
    await x.wait(timed.firstByteMs);
    return breakEnding(action.brk, x, undefined);
  }
  return runReply({ ...timed, action: { kind: "reply", reply: entry.action.reply, brk: action.brk } }, render(entry, selection.captures)!, input, x);
}
