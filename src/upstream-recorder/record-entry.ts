import { isScriptableTrailer } from "../script/check-status.js";
import { errorOf } from "../script/entry-from-call.js";
import { maxStatusMessageBytes } from "../script/script-limits.js";
import type { EntryInput, LatencyInput, ReplyInput } from "../script/script-schema.js";
import { templateHazard } from "../script/write-script.js";
import { splitChunks } from "../shared/split-chunks.js";
import { codeName } from "../shared/status-code.js";
import { clipScrubbed, redactArguments, redactTrailers, scrub, type Redaction } from "./redact.js";
import type { UpstreamReply, UpstreamResult } from "./upstream.js";

/** How the recorder writes entries: `--keep-chunks`, `--latency`, `--redact` and the key. */
export interface EntryOptions {
  keepChunks: boolean;
  latency: boolean;
  redaction: Redaction;
}

/** An entry recorded from one upstream call, and the comment lines that say where it came from. */
export interface RecordedEntry {
  entry: EntryInput;
  comments: string[];
  /** Why the upstream's answer could not be written, when an INTERNAL error stands in its place. */
  unrecorded?: string;
}

/**
 * A status as a script can hold it: trailers a script may carry (the upstream's transport
 * headers, like content-type, are not the answer's), the message within the script's limit.
 */
function statusOf(code: number, message: string, trailers: readonly [string, string][], r: Redaction) {
  // Scrubbed before it is clipped: a clip through a key would keep a prefix no scrub finds.
  let text = clipScrubbed(scrub(message, r), maxStatusMessageBytes, r);
  // A lone surrogate cannot travel in grpc-message (the script refuses one): a replacement character stands in.
  text = text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  const kept = redactTrailers(trailers, r).filter(([k, v]) => isScriptableTrailer(k, v));
  return errorOf({ code, message: text, trailers: kept.map(([key, value]) => ({ key, value })) });
}

/** The observed latency as the script declares it: first byte and an even per-chunk wait for a stream of several chunks. */
function latencyOf(result: UpstreamResult, chunks: number, stream: boolean): LatencyInput | undefined {
  if (result.kind !== "reply" || !stream || chunks < 2) return result.totalMs > 0 ? `${result.totalMs}ms` : undefined;
  const perChunk = Math.round(Math.max(0, result.totalMs - result.firstByteMs) / (chunks - 1));
  return { first_byte: `${result.firstByteMs}ms`, per_chunk: `${perChunk}ms` };
}

/** The reply of an upstream answer; tool calls without ids (the client gets the ids modelstub derives). */
function replyOf(reply: UpstreamReply, o: EntryOptions, stream: boolean, partial: boolean): Exclude<ReplyInput, string> {
  const r = o.redaction;
  const text = scrub(reply.text, r);
  const out: Exclude<ReplyInput, string> = {};
  if (text !== "") out.text = text;
  const chunks = reply.chunks.map((c) => scrub(c, r)).filter((c) => c !== "");
  if (o.keepChunks && stream && chunks.length > 1 && chunks.join("") === text) out.chunks = chunks;
  // A broken stream's tool calls are cut short, their arguments half a JSON text: the text alone is kept.
  const calls = partial ? [] : reply.toolCalls;
  if (calls.length > 0) {
    out.tool_calls = calls.map((c) => {
      const args = redactArguments(c.arguments, r);
      const name = scrub(c.name, r);
      try {
        const value: unknown = JSON.parse(args);
        if (value !== null && typeof value === "object" && !Array.isArray(value) && JSON.stringify(value) === args)
          return { name, arguments: value as Record<string, unknown> };
      } catch {
        // Not JSON: kept as a text, which the caller checks.
      }
      return { name, arguments: args };
    });
  }
  if (!partial && reply.finishReason !== (calls.length > 0 ? "tool_calls" : "stop")) out.finish_reason = reply.finishReason;
  if (reply.usage && !partial) out.usage = { input_tokens: reply.usage.input, output_tokens: reply.usage.output };
  return out;
}

/** Why a reply cannot be written as a script's literal (a `{{`, arguments that are not JSON), or undefined. */
function unwritable(reply: Exclude<ReplyInput, string>): string | undefined {
  const hazard =
    templateHazard(reply.text ?? "") ??
    reply.tool_calls?.map((c) => templateHazard(typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments))).find((h) => h);
  if (hazard) return `the reply cannot be written: ${hazard}`;
  for (const c of reply.tool_calls ?? []) {
    if (typeof c.arguments !== "string") continue;
    try {
      JSON.parse(c.arguments);
    } catch {
      return `the reply cannot be written: the arguments of tool call ${c.name} are not JSON (${c.arguments.slice(0, 60)})`;
    }
  }
  return undefined;
}

/**
 * The entry that reproduces one upstream answer: a reply (text, its chunks with --keep-chunks,
 * tool calls, finish reason, the upstream's usage), a broken stream (the text it sent, then its
 * status, a hang the client cut off, or a dropped link), an error status with the upstream's retry hints, a timeout, or a hang for a call
 * the client cut off; with --latency, the time observed.
 */
export function recordEntry(result: UpstreamResult, where: string, o: EntryOptions, stream: boolean): RecordedEntry {
  const comments = [where];
  let entry: EntryInput;
  let chunks = 1;
  switch (result.kind) {
    case "reply": {
      const reply = replyOf(result.reply, o, stream, result.broke !== undefined);
      const words = reply.chunks?.length ?? splitChunks(reply.text ?? "", { kind: "words" }).length;
      chunks =
        words +
        (reply.tool_calls ?? []).reduce(
          (n, c) => n + 1 + splitChunks(typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments), { kind: "words" }).length,
          0,
        );
      const usage = result.reply.usage ? `, usage ${result.reply.usage.input} in / ${result.reply.usage.output} out` : ", no usage (the token rule counts it)";
      comments[0] += `: ${result.reply.finishReason}, ${reply.tool_calls?.length ?? 0} tool call(s)${usage}, model ${JSON.stringify(scrub(result.reply.model, o.redaction))}`;
      const problem = unwritable(reply);
      if (problem) {
        comments.push(`not recorded: ${problem}; the client got this error in its place`);
        return { entry: { error: { code: "INTERNAL", message: `modelstub record: ${problem}` } }, comments, unrecorded: problem };
      }
      entry = { reply };
      const b = result.broke;
      if (b?.then === "hang") {
        comments.push(
          `cut off by the client after ${b.afterChunks} upstream delta(s): the client gets the text so far, then the stream stalls until its deadline or cancel`,
        );
        entry.break = { after_chunks: words, then: "hang" };
      } else if (b?.then === "drop") {
        comments.push(`the link dropped after ${b.afterChunks} upstream delta(s): the client gets the text so far, then a reset`);
        entry.break = { after_chunks: words, then: "drop" };
      } else if (b) {
        comments.push(`cut short after ${b.afterChunks} upstream delta(s): the client gets the text so far, then the status`);
        entry.break = { after_chunks: words, then: "error", error: statusOf(b.code ?? 14, b.message, b.trailers ?? [], o.redaction) };
      }
      break;
    }
    case "error":
      comments[0] += `: ${result.httpStatus !== undefined ? `HTTP ${result.httpStatus}, ` : ""}${codeName(result.code)}`;
      entry = { error: statusOf(result.code, result.message, result.trailers, o.redaction) };
      break;
    case "timeout":
      comments[0] += `: timed out (no whole answer, or no first chunk of a stream, within --upstream-timeout; or the upstream's own DEADLINE_EXCEEDED)`;
      entry = { timeout: true };
      break;
    case "aborted":
      comments[0] += `: the client's ${result.reason === "deadline" ? "deadline" : "cancel"} cut it off before the upstream answered`;
      entry = { hang: true };
      break;
  }
  const latency = o.latency ? latencyOf(result, chunks, stream) : undefined;
  return { entry: latency !== undefined ? { latency, ...entry } : entry, comments };
}

/**
 * The entry of a call the recorder's shutdown cut off before the upstream answered: the
 * UNAVAILABLE its client is answered with. Recorded rather than left out: a replay of the same
 * requests then answers that call as the client saw it, where a script without it would answer
 * it from the next entry or not at all; and not as a hang, which would stall a replay forever.
 */
export function shutdownEntry(where: string): RecordedEntry {
  return {
    entry: { error: { code: "UNAVAILABLE", message: "modelstub record is shutting down: the upstream had not answered this call" } },
    comments: [`${where}: the recorder shut down before the upstream answered; the client got this UNAVAILABLE`],
  };
}
