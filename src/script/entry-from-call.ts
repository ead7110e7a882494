import { chunkingFor, derivedSentText } from "../shared/derived-chunking.js";
import { splitChunks } from "../shared/split-chunks.js";
import { CallMethod, Outcome, StreamBreak, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import { FinishReason, type GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import { toolCallIdOf } from "../shared/call-ids.js";
import { clipText, quoteClipped } from "../shared/clip-text.js";
import { codeName } from "../shared/status-code.js";
import type { EntryInput, ErrorInput, ReplyInput } from "./script-schema.js";
import { countReplyTokens, countRequestTokens } from "../shared/count-tokens.js";
import { templateHazard } from "./write-script.js";

/** One recorded call as a script entry, with what keeps it from reproducing the call exactly. */
export interface CallEntry {
  entry: EntryInput;
  /** What the comment above the entry says: the call it came from. */
  comment: string;
  /** Reasons the entry does not reproduce the call byte for byte (empty when it does). */
  problems: string[];
  /** The model of the reply, when the request named none (it becomes `defaults.model`). */
  defaultModel: string | undefined;
}

const finishNames: Partial<Record<FinishReason, "stop" | "length" | "tool_calls" | "content_filter">> = {
  [FinishReason.STOP]: "stop",
  [FinishReason.LENGTH]: "length",
  [FinishReason.TOOL_CALLS]: "tool_calls",
  [FinishReason.CONTENT_FILTER]: "content_filter",
};

/** The status of a call as the script's `error:` mapping: code name, message, trailers in order. */
export function errorOf(status: { code: number; message: string; trailers: readonly { key: string; value: string }[] }): ErrorInput {
  // A recorded status is one of the names (CODE_<n> for one outside the table, which loading refuses).
  const out: ErrorInput = { code: codeName(status.code) as ErrorInput["code"] };
  if (status.message) out.message = status.message;
  if (status.trailers.length > 0) out.trailers = Object.fromEntries(status.trailers.map((t) => [t.key, t.value]));
  return out;
}

/**
 * Arguments as the script writes them: a mapping when that writes back the very same JSON text,
 * else the text; `valid` false when the text is not JSON, which the loader refuses.
 */
function argumentsOf(text: string): { args: string | Record<string, unknown>; valid: boolean } {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value) && JSON.stringify(value) === text)
      return { args: value as Record<string, unknown>, valid: true };
    return { args: text, valid: true };
  } catch {
    return { args: text, valid: false };
  }
}

/**
 * The reply of a call's response; problems go to `problems`, and those that keep the reply from
 * being written at all (the loader would refuse it) to `blockers` too.
 */
function replyOf(call: EpisodeCall, response: GenerateResponse, problems: string[], blockers: string[]): Exclude<ReplyInput, string> {
  const block = (why: string) => blockers.push(why);
  const message = response.message;
  const text = message?.content ?? "";
  const reply: Exclude<ReplyInput, string> = {};
  if (text !== "") reply.text = text;
  const hazard = templateHazard(text);
  if (hazard) block(`the reply text cannot be written: ${hazard}`);
  const calls = message?.toolCalls ?? [];
  if (calls.length > 0) {
    reply.tool_calls = calls.map((t, i) => {
      const { args, valid } = argumentsOf(t.arguments);
      if (!valid) block(`tool call ${i} (${t.name}) has arguments that are not JSON, which a script cannot hold: ${JSON.stringify(clipText(t.arguments))}`);
      const hazard = templateHazard(t.arguments);
      if (hazard) block(`tool call ${i} (${t.name}) arguments cannot be written: ${hazard}`);
      if (t.name === "") block(`tool call ${i} has no name, which a script cannot hold`);
      return { name: t.name, arguments: args, ...(t.id === toolCallIdOf(call.session, call.sequence, i) ? {} : { id: t.id }) };
    });
    if (calls.some((t) => t.id === "")) block("a tool call has an empty id, which a script cannot give");
  }
  const finish = finishNames[response.finishReason];
  if (finish === undefined) problems.push(`finish reason ${response.finishReason} cannot be scripted`);
  else if (finish !== (calls.length > 0 ? "tool_calls" : "stop")) reply.finish_reason = finish;
  // Counts the token rule gives anyway are left out: the script reads simpler, and an entry
  // that answered several requests (whose input counts differ by the rule) stays one entry.
  const input = response.usage?.inputTokens ?? 0;
  const output = response.usage?.outputTokens ?? 0;
  const usage: { input_tokens?: number; output_tokens?: number } = {};
  if (!call.request || input !== countRequestTokens(call.request)) usage.input_tokens = input;
  if (output !== countReplyTokens(text, calls)) usage.output_tokens = output;
  if (Object.keys(usage).length > 0) reply.usage = usage;
  if (call.method === CallMethod.GENERATE_STREAM) {
    const args = calls.map((t) => t.arguments);
    const broken = call.outcome === Outcome.STREAM_BROKEN;
    const sent = call.sentTextChunks;
    const prefix = sent.join("");
    if (broken && sent.length > 0 && text.startsWith(prefix) && !sent.includes("")) {
      // The chunks the client was sent, as sent, then the rest of the text by the words rule:
      // a replay sends the same bytes, in the same chunks, before the break.
      const rest = text.slice(prefix.length);
      reply.chunks = [...sent, ...(rest === "" ? [] : splitChunks(rest, { kind: "words" }))];
    } else {
      const chunking = chunkingFor(text, args, call.chunksSent, broken);
      if (chunking === undefined) problems.push(`no chunking of this reply sends the ${call.chunksSent} chunks the stream sent`);
      else Object.assign(reply, chunking);
    }
  }
  return reply;
}

/**
 * What `--strict` checks beyond the episode: whether a replay of `entry` sends the client the
 * same text chunks before its break as the recording did (the episode's sent_text_chunks, or
 * where it has none the cut derivedSentText gives, which is what the engine left them out for).
 * A sentence saying how they differ, or undefined.
 */
function clientSeesDifferently(call: EpisodeCall, entry: EntryInput): string | undefined {
  const reply = entry.reply;
  if (call.method !== CallMethod.GENERATE_STREAM || !entry.break || reply === undefined || typeof reply === "string") return undefined;
  const text = reply.text ?? reply.chunks?.join("") ?? "";
  const expected =
    call.sentTextChunks.length > 0
      ? call.sentTextChunks
      : derivedSentText(
          call.response?.message?.content ?? "",
          (call.response?.message?.toolCalls ?? []).map((t) => t.arguments),
          call.chunksSent,
        );
  if (!expected) return undefined;
  const chunks = reply.chunks ?? (typeof reply.chunking === "object" ? Array.from(text) : splitChunks(text, { kind: "words" }));
  const replayed = chunks.slice(0, entry.break.after_chunks);
  if (replayed.length === expected.length && replayed.every((c, i) => c === expected[i])) return undefined;
  return `a replay would send the client ${quoteClipped(replayed.join(""))} in ${replayed.length} chunk(s) before the break, where the recording sent ${quoteClipped(expected.join(""))} in ${expected.length}`;
}

/** A line about the call: `call 3, GenerateStream, step plan: ok, text "Hello" and 1 tool call (bash)`. */
function describe(call: EpisodeCall): string {
  const method = call.method === CallMethod.GENERATE_STREAM ? "GenerateStream" : "Generate";
  const where = call.stepId ? `, step ${call.stepId}` : "";
  const answered = call.entry ? ` (answered by ${call.entry} in the recording)` : "";
  const what = Outcome[call.outcome]?.toLowerCase().replace(/_/g, " ") ?? String(call.outcome);
  return `call ${call.sequence}, ${method}${where}: ${what}${answered}`;
}

/**
 * The entry that reproduces one recorded call when the same request is sent again: its reply
 * (text, tool calls with their ids unless they are the ones the engine derives, finish reason,
 * usage, and for a stream a chunking that sends as many chunks), its status, timeout or hang,
 * its stream break, and its declared time as a first-byte latency (per-chunk waits cannot be
 * told apart from it in an episode, and their sum is what the timeline records).
 */
export function entryFromCall(call: EpisodeCall): CallEntry {
  const problems: string[] = [];
  const blockers: string[] = [];
  const declared = Number(call.endMs - call.startMs);
  const entry: EntryInput = declared > 0 ? { latency: `${declared}ms` } : {};
  const response = call.response;
  const status = call.status;
  let defaultModel: string | undefined;
  if (response && call.request) {
    if (call.request.model === "") defaultModel = response.model;
    else if (call.request.model !== response.model)
      problems.push(`the reply names model ${JSON.stringify(response.model)} but the request asked for ${JSON.stringify(call.request.model)}`);
  }
  // A call a fault plan struck names no entry either, but was no miss: it gets its own notes.
  if (call.fault) {
    problems.push(`a fault plan's ${call.fault.rule} struck this call; the entry scripts what it did`);
    // A scripted timeout's message is the engine's and names its entry; a script cannot set it.
    if (call.outcome === Outcome.TIMED_OUT) {
      problems.push(
        `the plan's timeout said ${JSON.stringify(status?.message ?? "")}; the replay's will say "scripted timeout at" the entry that answers it, since a scripted timeout's message names its entry`,
      );
    }
  } else if (call.entry === "" && call.outcome !== Outcome.DEADLINE_EXCEEDED && call.outcome !== Outcome.CANCELLED) {
    problems.push("no entry answered this call in the recording (a miss, a spent list or a refused step); it is scripted as the status it got");
  }
  switch (call.outcome) {
    case Outcome.OK:
      if (!response) {
        problems.push("the call is recorded as answered but holds no reply; scripted as an empty one");
        entry.reply = "";
        break;
      }
      entry.reply = replyOf(call, response, problems, blockers);
      break;
    case Outcome.STREAM_BROKEN: {
      if (!response) {
        problems.push("the stream broke before a reply was rendered; scripted as the status it ended with");
        entry.error = status ? errorOf(status) : { code: "UNAVAILABLE" };
        break;
      }
      entry.reply = replyOf(call, response, problems, blockers);
      const then = call.streamBreak === StreamBreak.HANG ? "hang" : call.streamBreak === StreamBreak.DROP ? "drop" : "error";
      entry.break = { after_chunks: call.chunksSent, then, ...(then === "error" && status ? { error: errorOf(status) } : {}) };
      break;
    }
    case Outcome.TIMED_OUT:
      entry.timeout = true;
      break;
    case Outcome.DEADLINE_EXCEEDED:
    case Outcome.CANCELLED: {
      // The caller's deadline or cancel ended it: replayed, the same deadline or cancel ends a hang.
      const sent = call.sentTextChunks;
      if (call.chunksSent > 0 && sent.length === call.chunksSent && !sent.includes("")) {
        // Cut off part-way through its text: the chunks the client got, at once, then a hang the
        // same deadline or cancel ends. At once: waiting the declared time first would let the
        // deadline pass before any chunk went. The replay's episode names the entry and records a
        // break where the recording's recorded the cut-off: the client sees the same.
        delete entry.latency;
        entry.reply = { text: sent.join(""), chunks: [...sent] };
        entry.break = { after_chunks: call.chunksSent, then: "hang" };
        problems.push(
          `the caller cut the stream off after ${call.chunksSent} chunks: scripted as those chunks and a hang the same deadline or cancel ends, which the replay's episode records as a break`,
        );
        break;
      }
      if (call.chunksSent > 0)
        problems.push(`the caller cut the stream off after ${call.chunksSent} chunks, whose content the episode does not hold; scripted as a hang`);
      entry.hang = true;
      break;
    }
    default:
      entry.error = status ? errorOf(status) : { code: "UNKNOWN" };
  }
  const seen = clientSeesDifferently(call, entry);
  if (seen) problems.push(seen);
  if (blockers.length > 0) {
    // The loader would refuse the reply: an error that says why stands in, so the script loads.
    problems.push(...blockers);
    delete entry.reply;
    delete entry.break;
    entry.error = { code: "INTERNAL", message: `modelstub script from-episode: ${blockers[0]}` };
  }
  return { entry, comment: describe(call), problems, defaultModel };
}
