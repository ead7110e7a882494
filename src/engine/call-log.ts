import type { Outcome } from "../../gen/modelstub/v1/episode_pb.js";

/** What a finished call reports, for logs. */
export interface CallLog {
  session: string;
  method: "generate" | "stream";
  step: string;
  entry: string;
  /** The answering entry's `name:`, when the script gives one. */
  entryName?: string | undefined;
  /** The model the request names ("" when none). */
  model: string;
  /** The request's last user message, whole: loggers clip it (the line answers "what did it ask"). */
  lastUser: string;
  sequence: number;
  outcome: Outcome;
  code: number;
  declaredMs: number;
  /** The status message of a call that ended with one (a miss says which entries came near). */
  message?: string | undefined;
}
