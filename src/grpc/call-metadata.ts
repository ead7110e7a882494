import type { Metadata } from "@grpc/grpc-js";
import { sessionHeader } from "../shared/header-names.js";

/** The first text value of a metadata key, or "" when absent. */
export function metadataText(metadata: Metadata, key: string): string {
  const v = metadata.get(key)[0];
  return typeof v === "string" ? v : v ? v.toString("utf8") : "";
}

/** The session a call selects (`default` when it names none). */
export function sessionOf(metadata: Metadata): string {
  return metadataText(metadata, sessionHeader) || "default";
}
