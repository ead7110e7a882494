import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { fingerprintOf, requestDigest, sha256Hex } from "../shared/request-fingerprint.js";
import type { RequestMatchInput } from "./script-schema.js";

/** What `record --match` and `script from-episode --match` write with each entry: the readable match (default), the digest, or nothing. */
export type MatchKind = "readable" | "digest" | "none";

/** The match kinds, as the CLI lists them. */
export const matchKinds: readonly MatchKind[] = ["readable", "digest", "none"];

/**
 * A text longer than this (in UTF-16 code units) is written by its SHA-256 and how it begins: a
 * long prompt is in every entry of a tool loop, and a script holds 512 KiB.
 */
export const longTextChars = 1024;

/** How many characters of a long text its `begins` keeps. */
const beginsChars = 60;

function textOf(text: string, scrub: (t: string) => string): string | { sha256: string; begins: string } {
  // A lone surrogate stays inside: JSON and YAML keep it, and the hash is of the text as sent.
  return text.length > longTextChars ? { sha256: sha256Hex(text), begins: scrub(text.slice(0, beginsChars)) } : scrub(text);
}

/**
 * The `request:` an entry recorded for `req` keeps: the last user text, the tool results since
 * the previous assistant turn and the tools offered (each left out when empty, which means "none"
 * to the replay), or the digest of the canonical request; undefined with "none". `scrub` takes
 * secrets out of the texts written (the recorder's key; a text so scrubbed no longer matches a
 * request that held the key).
 */
export function requestMatchOf(req: GenerateRequest, kind: MatchKind, scrub: (t: string) => string = (t) => t): RequestMatchInput | undefined {
  if (kind === "none") return undefined;
  if (kind === "digest") return { digest: requestDigest(req) };
  const fp = fingerprintOf(req);
  const out: RequestMatchInput = {};
  if (fp.lastUser !== "") out.last_user = textOf(fp.lastUser, scrub);
  if (fp.toolResults.length > 0) out.tool_results = fp.toolResults.map((r) => ({ tool: scrub(r.tool), content: textOf(r.content, scrub) }));
  if (fp.tools.length > 0) out.tools = fp.tools.map(scrub);
  return out;
}
