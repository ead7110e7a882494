import type { CompiledScript } from "../script/compiled-script.js";
import type { Session } from "./session.js";

/** A verify report: the limited entries a session has not used up yet. */
export interface Verification {
  satisfied: boolean;
  unused: { entry: string; remaining: number; summary: string }[];
  message: string;
}

/**
 * Reports the limited entries of a session not used up yet; a session the stub has not seen
 * (undefined) has used none of `script`'s.
 */
export function verifySession(session: Session | undefined, script: CompiledScript): Verification {
  const unused: Verification["unused"] = [];
  const cursors = session ? session.allCursors() : [...script.lists.values()].map((list) => ({ list, used: new Uint32Array(list.entries.length) }));
  for (const { list, used } of cursors) {
    list.entries.forEach((e, i) => {
      if (e.limited && used[i]! < e.limit) unused.push({ entry: e.ref, remaining: e.limit - used[i]!, summary: e.summary });
    });
  }
  const message =
    unused.length === 0
      ? "every scripted entry was used"
      : `${unused.length} scripted entr${unused.length === 1 ? "y was" : "ies were"} not used up: ${unused.map((u) => `${u.summary} (${u.remaining} left)`).join("; ")}`;
  return { satisfied: unused.length === 0, unused, message };
}
