import type { Outcome } from "../../gen/modelstub/v1/episode_pb.js";

/** What a finished call reports, for logs. */
export interface CallLog {
  session: string;
  method: "generate" | "stream";
  step: string;
  entry: string;
  sequence: number;
  outcome: Outcome;
  code: number;
  declaredMs: number;
}
