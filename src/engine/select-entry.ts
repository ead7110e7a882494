import { nearestName } from "../shared/nearest-name.js";
import type { CallStatus, CompiledEntry, CompiledList, ReplayMode, RequestFacts, RequestView } from "../script/compiled-script.js";
import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { requestFacts } from "../shared/request-fingerprint.js";
import type { Session } from "./session.js";
import { Code } from "../shared/status-code.js";
import { clipText, quoteClipped } from "../shared/clip-text.js";

/** What the replay mode compares entries' recorded `request:` with: the call's request, and the mode (the script's unless overridden). */
export interface ReplayCheck {
  request: GenerateRequest;
  /** serve --replay-mode: overrides the script's `replay.mode`. */
  mode?: ReplayMode | undefined;
}

/**
 * The refusal of a request that does not match the recording: what differs from `expected`
 * (the entry the mode wanted to answer, or, with none, the nearest), and the recorded entry of
 * the list nearest to the request (fewest differences, unused first, then file order).
 */
function mismatch(
  list: CompiledList,
  used: Uint32Array,
  facts: RequestFacts,
  mode: ReplayMode,
  expected: { entry: CompiledEntry; differences: string[] } | undefined,
): CallStatus {
  const scored = list.entries
    .map((e, i) => ({ e, i, d: e.request ? e.request.differences(facts) : undefined }))
    .filter((c): c is { e: CompiledEntry; i: number; d: string[] } => c.d !== undefined)
    .sort((a, b) => a.d.length - b.d.length || Number(used[a.i]! >= a.e.limit) - Number(used[b.i]! >= b.e.limit) || a.i - b.i);
  if (!expected && scored[0]?.d.length === 0) {
    return {
      code: Code.FAILED_PRECONDITION,
      message: `the request matches only ${scored[0].e.ref} of ${list.label}, which is already used (replay mode ${mode}): the recording made this request fewer times`,
      trailers: [],
    };
  }
  const against = expected ?? (scored[0] && { entry: scored[0].e, differences: scored[0].d });
  const shown = against ? against.differences.slice(0, 4) : [];
  const more = against && against.differences.length > 4 ? `; and ${against.differences.length - 4} more` : "";
  const head = expected
    ? `the request does not match ${expected.entry.ref}, the next recorded entry of ${list.label} (replay mode ${mode}): `
    : `the request matches no unused recorded entry of ${list.label} (replay mode ${mode}); against ${against?.entry.ref ?? "its entries"}: `;
  const nearest = scored.find((c) => c.e !== expected?.entry);
  let tail = "";
  if (expected && nearest && nearest.d.length < expected.differences.length) {
    const spent = used[nearest.i]! >= nearest.e.limit ? ", already used" : "";
    tail =
      nearest.d.length === 0
        ? `; nearest recorded entry: ${nearest.e.ref} (matches exactly${spent}: the requests came in another order than recorded)`
        : `; nearest recorded entry: ${nearest.e.ref} (${nearest.d.length} difference${nearest.d.length === 1 ? "" : "s"}${spent})`;
  } else if (expected) {
    tail = "; no other recorded entry is nearer";
  }
  return {
    code: Code.FAILED_PRECONDITION,
    message: `${head}${shown.join("; ")}${more}${tail}; replay the recorded conversation, record it again, or serve with --replay-mode order-only`,
    trailers: [],
  };
}

/** The entry that answers a call, with its regex captures; or the status that answers instead. */
export type Selection = { entry: CompiledEntry; captures: RegExpExecArray | null } | { status: CallStatus };

/** One line about a request, for miss messages. */
export function summarizeRequest(view: RequestView): string {
  const parts = [`model ${quoteClipped(view.model)}`, `turn ${view.turn}`, `last user message ${JSON.stringify(clipText(view.lastUser))}`];
  if (view.lastIsToolResult) parts.push(`last message a result of tool ${quoteClipped(view.lastToolName)}`);
  return parts.join(", ");
}

function findList(session: Session, stepId: string): CompiledList | CallStatus {
  const lists = session.script.lists;
  const list = lists.get(stepId);
  if (list) return list;
  const steps = [...lists.keys()].filter((k) => k !== "");
  if (stepId === "") {
    return {
      code: Code.NOT_FOUND,
      message: `the request has no step id and the script has no main entries list; send step_id (or metadata x-modelstub-step) with one of: ${steps.join(", ")}`,
      trailers: [],
    };
  }
  const near = nearestName(stepId, steps);
  return {
    code: Code.NOT_FOUND,
    message: `the script has no step ${JSON.stringify(stepId)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ""}; its steps are: ${steps.join(", ") || "(none)"}`,
    trailers: [],
  };
}

/**
 * Picks the entry that answers: the first entry in file order that has uses left and matches.
 * When no entry has uses left the list is exhausted, and its `on_exhausted` decides:
 * fail (FAILED_PRECONDITION), repeat-last (the last entry never runs out), or cycle (all entries
 * get their uses back). When entries are left but none matches, the call misses (NOT_FOUND)
 * and the message names the nearest candidates.
 *
 * With `consume` false it only looks: the entry that would answer, its use not counted (a fault
 * plan's break streams the reply the script would give, and its retry gets the same reply).
 */
export function selectEntry(session: Session, stepId: string, view: RequestView, consume = true, replay?: ReplayCheck): Selection {
  const found = findList(session, stepId);
  if (!("entries" in found)) return { status: found };
  const list = found;
  const cursor = session.cursor(list);
  const entries = list.entries;
  const lastIndex = entries.length - 1;
  const repeatLast = list.onExhausted === "repeat-last";
  // Recorded requests are compared unless the mode is order-only (or nothing to compare with).
  const mode = replay ? (replay.mode ?? session.script.replayMode ?? "strict") : "order-only";
  const facts = mode !== "order-only" ? requestFacts(replay!.request) : undefined;
  let skipped = false;
  for (let attempt = 0; attempt < 2; attempt++) {
    let anyLeft = false;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const limit = repeatLast && i === lastIndex ? Infinity : e.limit;
      // The second attempt comes after a cycle gave every entry its uses back.
      if ((attempt === 0 ? cursor.used[i]! : 0) >= limit) continue;
      anyLeft = true;
      const captures = e.matcher ? e.matcher.test(view) : [];
      if (captures === null) continue;
      if (facts && e.request) {
        const differences = e.request.differences(facts);
        if (differences.length > 0) {
          if (mode === "strict") return { status: mismatch(list, cursor.used, facts, mode, { entry: e, differences }) };
          // unordered: the first unused entry whose request matches answers, as a cassette does.
          skipped = true;
          continue;
        }
      }
      if (consume) {
        cursor.used[i]!++;
        cursor.served++;
      }
      return { entry: e, captures: captures.length === 0 ? null : (captures as RegExpExecArray) };
    }
    if (skipped) return { status: mismatch(list, cursor.used, facts!, mode, undefined) };
    if (anyLeft) break;
    if (list.onExhausted === "cycle" && entries.length > 0 && attempt === 0) {
      if (consume) cursor.used.fill(0);
      continue;
    }
    return {
      status: {
        code: Code.FAILED_PRECONDITION,
        message: `${list.label} ran out: it served its ${plural(entries.length, "entry", "entries")} (${plural(cursor.served, "call", "calls")}); add entries, or set on_exhausted: repeat-last or cycle on this list`,
        trailers: [],
      },
    };
  }
  const candidates = entries
    .map((e, i) => ({ e, i, failing: e.matcher ? e.matcher.failing(view) : [] }))
    .filter(({ e, i }) => cursor.used[i]! < (repeatLast && i === lastIndex ? Infinity : e.limit))
    .sort((a, b) => a.failing.length - b.failing.length || a.i - b.i)
    .slice(0, 3)
    .map(({ e, failing }) => `${e.ref} (wants ${failing.join(" and ")})`);
  return {
    status: {
      code: Code.NOT_FOUND,
      message: `no entry of ${list.label} matches the request (${summarizeRequest(view)}); nearest: ${candidates.join("; ")}`,
      trailers: [],
    },
  };
}

/** "1 entry", "3 entries": messages read as sentences. */
function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
