import type { CallStatus } from "../script/compiled-script.js";
import { nearestName } from "../shared/nearest-name.js";
import { Code } from "../shared/status-code.js";
import type { Stub } from "./stub.js";

/** How many kept session names the message lists when none is close to the one asked for. */
const namesListed = 5;

/**
 * NOT_FOUND for a session the server does not keep, asked for its episode or a verification: a
 * misspelt name would otherwise read as an empty episode, and a test asserting "no calls were
 * made" would check nothing. A session exists from the first call, LoadScript or SetFaultPlan
 * that names it until DeleteSession or idle eviction forgets it; a reset creates none (it stays
 * idempotent). The message names the closest kept session, or lists a few, and says how to ask
 * for the empty episode of a session expected to have had no calls (`optOut`, in the words of
 * the caller's surface: `allow_missing`, `--allow-missing`, `{ allowMissing: true }`).
 * Undefined when the session exists.
 */
export function missingSession(stub: Pick<Stub, "episodeIdOf" | "sessions">, name: string, optOut: string): CallStatus | undefined {
  // A kept session always has an open episode: the cheap test, before listing any names.
  if (stub.episodeIdOf(name) !== undefined) return undefined;
  const kept = stub.sessions().map((s) => s.name);
  const near = nearestName(name, kept);
  const known = near
    ? `; did you mean ${JSON.stringify(near)}?`
    : kept.length === 0
      ? "; it keeps none yet"
      : `; it keeps ${kept
          .slice(0, namesListed)
          .map((k) => JSON.stringify(k))
          .join(", ")}${kept.length > namesListed ? ` and ${kept.length - namesListed} more` : ""}`;
  const message =
    `no session ${JSON.stringify(name)}: the server keeps no session of that name (a session exists once a call, LoadScript or SetFaultPlan names it, until it is deleted or evicted)${known}${known.endsWith("?") ? "" : "."} ` +
    `To read the empty episode of a session expected to have had no calls, ask with ${optOut}`;
  return { code: Code.NOT_FOUND, message, trailers: [] };
}
