import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallInput } from "./call-input.js";
import type { CompiledEntry } from "../script/compiled-script.js";
import type { Ending } from "./ending.js";
import type { Execution } from "./execution.js";
import type { RenderedReply } from "./render-reply.js";
import { runReply } from "./run-reply.js";
import { Code } from "../shared/status-code.js";

/** Runs the entry's action: a reply (run-reply.ts), or a scripted error, timeout or hang after its first-byte wait. */
export async function runEntry(entry: CompiledEntry, rendered: RenderedReply | undefined, input: CallInput, x: Execution): Promise<Ending> {
  const action = entry.action;
  switch (action.kind) {
    case "reply":
      return runReply(entry, rendered!, input, x);
    case "error":
      await x.wait(entry.firstByteMs);
      return { result: { kind: "status", status: action.status }, outcome: Outcome.ERROR, status: action.status };
    case "timeout": {
      await x.wait(entry.firstByteMs);
      const status = { code: Code.DEADLINE_EXCEEDED, message: `scripted timeout at ${entry.ref}`, trailers: [] };
      return { result: { kind: "status", status }, outcome: Outcome.TIMED_OUT, status };
    }
    case "hang":
      await x.wait(entry.firstByteMs);
      return x.hang();
  }
}
