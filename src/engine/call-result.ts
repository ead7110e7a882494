import type { GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { CallStatus } from "../script/compiled-script.js";

/** How a call ended, for the transport to put on the wire. */
export type CallResult =
  | { kind: "ok"; response: GenerateResponse }
  /** End the call with this status. */
  | { kind: "status"; status: CallStatus }
  /** The call was cut off: the transport has ended it already; write nothing. */
  | { kind: "aborted"; reason: "deadline" | "cancelled" }
  /** Reset the transport stream abruptly (a scripted "link that dies"). */
  | { kind: "drop" };
