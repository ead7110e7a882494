import type { CallStatus } from "../script/compiled-script.js";
import { Code } from "../shared/status-code.js";

/** Why an episode closed: ResetSession, LoadScript, SetFaultPlan, DeleteSession, or idle eviction. */
export type EpisodeCloseReason = "reset" | "reload" | "faults" | "delete" | "evict";

/** The status of a call cut off because its episode closed, as the client sees it. */
export function closedStatus(session: string, why: EpisodeCloseReason): CallStatus {
  const name = JSON.stringify(session);
  const what =
    why === "reload"
      ? `a new script was loaded into session ${name}`
      : why === "faults"
        ? `a fault plan was set on session ${name}`
        : why === "reset"
          ? `session ${name} was reset`
          : why === "delete"
            ? `session ${name} was deleted`
            : `session ${name} was evicted`;
  return { code: Code.CANCELLED, message: `${what} while this call was running`, trailers: [] };
}
