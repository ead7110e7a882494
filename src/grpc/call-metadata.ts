import type { Metadata } from "@grpc/grpc-js";

/** Metadata keys of the public contract. */
export const sessionHeader = "x-modelstub-session";
export const stepHeader = "x-modelstub-step";

/** The first text value of a metadata key, or "" when absent. */
export function metadataText(metadata: Metadata, key: string): string {
  const v = metadata.get(key)[0];
  return typeof v === "string" ? v : v ? v.toString("utf8") : "";
}

/** The session a call selects (`default` when it names none). */
export function sessionOf(metadata: Metadata): string {
  return metadataText(metadata, sessionHeader) || "default";
}
