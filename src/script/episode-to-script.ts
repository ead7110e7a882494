import { CallMethod, type Episode, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import { entryFromCall, type CallEntry } from "./entry-from-call.js";
import type { EntryInput } from "./script-schema.js";
import { oversizeProblem } from "./write-script-file.js";
import { writeScript, type DraftEntry, type DraftList, type ScriptDraft } from "./write-script.js";
import { requestMatchOf, type MatchKind } from "./request-match-of.js";

/** A script made from an episode, and the calls it cannot reproduce byte for byte. */
export interface EpisodeScript {
  /** The script, as commented YAML that `loadScriptText` accepts. */
  text: string;
  draft: ScriptDraft;
  /** `call 3: why`, one per problem; empty when replaying reproduces the episode's bytes. */
  problems: string[];
}

/**
 * An entry that never answers: its regex matches no text at all (a class of no character), so
 * it only holds a place, keeping the entries after it at the index the recording names.
 */
export const placeholderEntry: EntryInput = { name: "placeholder", match: { regex: "[^\\s\\S]" }, reply: "" };

/** The comment lines above an entry: the call it reproduces, and what it does not reproduce exactly. */
const commentsOf = (entry: CallEntry) => [entry.comment, ...entry.problems.map((p) => `not exact: ${p}`)];

/** The index an entry ref like `steps.plan[2]` or `entries[0]` names in the list `label`, or undefined. */
function indexIn(ref: string, label: string): number | undefined {
  if (!ref.startsWith(`${label}[`) || !ref.endsWith("]")) return undefined;
  const n = ref.slice(label.length + 1, -1);
  return /^\d+$/.test(n) ? Number(n) : undefined;
}

/**
 * The list's entries at the places the recording's refs name, so a replayed call records the
 * same `entry`: each place used by a run of consecutive calls with the same answer (`times`),
 * placeholders between. Undefined when the recording cannot be laid out so (a call no entry
 * answered, a place used again after another, one place giving two different answers).
 */
function placed(label: string, calls: { call: EpisodeCall; entry: CallEntry }[]): DraftEntry[] | undefined {
  const out: DraftEntry[] = [];
  let last = -1;
  let unaryOnly = false; // whether every call of the current place so far was unary
  for (const { call, entry } of calls) {
    const i = indexIn(call.entry, label);
    if (i === undefined || i < last || call.fault) return undefined;
    const unary = call.method !== CallMethod.GENERATE_STREAM;
    if (i === last) {
      const d = out[i]!;
      const { times, ...kept } = d.entry;
      if (answerKey(kept) !== answerKey(entry.entry)) return undefined;
      // A stream's chunking and break point are its own; a unary call's are free, so the place keeps a stream's.
      // One entry answered several requests: it keeps a `request:` only if they were all the same.
      const sameRequest = JSON.stringify(d.entry.request) === JSON.stringify(entry.entry.request);
      if (unaryOnly && !unary) d.entry = { ...entry.entry };
      const { name, match, times: _, request, ...after } = d.entry;
      d.entry = {
        ...(name !== undefined ? { name } : {}),
        ...(match ? { match } : {}),
        times: (times ?? 1) + 1,
        ...after,
        ...(request && sameRequest ? { request } : {}),
      };
      if (request && !sameRequest) d.comments.push("written without request: it answered different requests in the recording");
      d.comments.push(...commentsOf(entry));
      unaryOnly &&= unary;
      continue;
    }
    while (out.length < i) out.push({ comments: ["not used in the recording: holds the place of the entry that was here"], entry: { ...placeholderEntry } });
    out.push({ comments: commentsOf(entry), entry: { ...entry.entry } });
    last = i;
    unaryOnly = unary;
  }
  return out;
}

/**
 * What two calls answered by one entry must agree on: everything but what only a stream shows
 * (its chunks and chunking, and where a break cuts it), which a unary call leaves free.
 */
function answerKey(entry: EntryInput): string {
  const { reply, break: brk, request: _, ...rest } = entry;
  const r = typeof reply === "object" ? { ...reply, chunks: undefined, chunking: undefined } : reply;
  return JSON.stringify({ ...rest, reply: r, break: brk && { ...brk, after_chunks: undefined } });
}

/**
 * Turns an episode into a script that reproduces it: served, with the episode's requests sent
 * again in order (same session name, step ids, methods, and the same deadlines or cancels for
 * calls the caller cut off), it records the same episode bytes. Each step's list (and the main
 * list) holds one entry per call in call order, or, when the recording allows it, its entries at
 * the very indices the episode names (with `times` for an entry that answered consecutive calls,
 * and placeholders that never answer in the gaps), so `entry` reads the same too. What cannot
 * round-trip exactly is listed in `problems` and in the script's comments.
 */
export function scriptFromEpisode(episode: Episode, source: string, match: MatchKind = "readable"): EpisodeScript {
  const problems: string[] = [];
  const byList = new Map<string, { call: EpisodeCall; entry: CallEntry }[]>();
  const models = new Set<string>();
  for (const call of episode.calls) {
    // An embeddings call takes no entry: a replay derives the same vectors; the script's own are noted.
    if (call.method === CallMethod.EMBED) {
      if (call.embedResponse?.data.some((d) => d.entry !== ""))
        problems.push(
          `call ${call.sequence}: an embeddings call answered by the script's embeddings: vectors, which are not written back; copy its embeddings: section`,
        );
      continue;
    }
    const entry = entryFromCall(call);
    // The request it answered, kept last in the entry: a replay holds each request to it.
    const request = call.request && requestMatchOf(call.request, match);
    if (request) entry.entry = { ...entry.entry, request };
    for (const p of entry.problems) problems.push(`call ${call.sequence}: ${p}`);
    if (entry.defaultModel !== undefined) models.add(entry.defaultModel);
    let list = byList.get(call.stepId);
    if (!list) byList.set(call.stepId, (list = []));
    list.push({ call, entry });
  }
  if (episode.faultPlan) {
    problems.push(
      `the episode ran under the fault plan ${JSON.stringify(episode.faultPlan.name)}: its faults are scripted as plain failures, so the replayed episode has no fault_plan and no per-call fault`,
    );
  }
  if (models.size > 1) problems.push(`calls that named no model got replies naming ${[...models].join(", ")}; a script names one default model`);
  const lists: DraftList[] = [];
  for (const [key, calls] of byList) {
    const label = key === "" ? "entries" : `steps.${key}`;
    let entries = placed(label, calls);
    if (!entries) {
      entries = calls.map(({ entry }) => ({ comments: commentsOf(entry), entry: entry.entry }));
      const moved = calls.filter(({ call }, i) => call.entry !== "" && call.entry !== `${label}[${i}]`).length;
      if (moved > 0)
        problems.push(
          `${label}: the recording used its entries out of call order or gave one entry different answers, so its entries are written one per call and ${moved} call${moved === 1 ? "" : "s"} will name a different entry`,
        );
    }
    lists.push({ key, entries });
  }
  const header = () => [
    `Made by \`modelstub script from-episode\` from ${source}: ${episode.calls.length} call${episode.calls.length === 1 ? "" : "s"} of session "${episode.session}".`,
    "Serve it and send the same requests in the same order, in a session of that name, to record the same episode.",
    ...(problems.length > 0 ? [`Not reproduced exactly: ${problems.length} problem${problems.length === 1 ? "" : "s"}, each noted above its entry.`] : []),
  ];
  const draft: ScriptDraft = { header: header(), name: `from-episode ${episode.session}`, lists };
  const model = [...models][0];
  if (model !== undefined && model !== "modelstub") draft.defaults = { model };
  if (match !== "none") draft.replay = { mode: "strict" };
  let text = writeScript(draft);
  const oversize = oversizeProblem(text);
  if (oversize) {
    // Written all the same (it can be cut down by hand), but no replay can reproduce the episode.
    problems.push(oversize);
    draft.header = header();
    text = writeScript(draft);
  }
  return { text, draft, problems };
}
