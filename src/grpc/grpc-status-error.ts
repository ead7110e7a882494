import { Metadata } from "@grpc/grpc-js";
import type { CallStatus } from "../script/compiled-script.js";
import { fitStatusDetails } from "./fit-status-details.js";

/** A grpc-js status error carrying the engine's status, with its trailers in order. */
export function grpcStatusError(status: CallStatus): { code: number; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  // A `-bin` trailer is binary on the wire: the script gives it as base64 (checked at load), and
  // grpc-js takes it only as bytes, which it base64-encodes again for HTTP/2.
  for (const [k, v] of status.trailers) metadata.add(k, k.endsWith("-bin") ? Buffer.from(v, "base64") : v);
  return { code: status.code, details: fitStatusDetails(status.message), metadata };
}
