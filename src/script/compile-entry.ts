import { FinishReason } from "../../gen/modelstub/v1/model_pb.js";
import { checkStatus } from "./check-status.js";
import { compileMatch } from "./compile-matcher.js";
import type { BreakInput, EntryInput, ErrorInput } from "./script-schema.js";
import { Code, type CodeName } from "../shared/status-code.js";
import { compileTemplate, type CaptureInfo } from "./compile-template.js";
import type { Action, CallStatus, Chunking, CompiledBreak, CompiledEntry, CompiledReply, Matcher, Template } from "./compiled-script.js";
import { compileChunking, compileLatency } from "./compile-latency.js";
import { compileArguments } from "./compile-arguments.js";
import { checkBreak, checkChunks } from "./check-reply-chunks.js";
import type { Report } from "./report.js";
import { compileRequestCheck } from "./compile-request-check.js";

const finishReasons: Record<string, FinishReason> = {
  stop: FinishReason.STOP,
  length: FinishReason.LENGTH,
  tool_calls: FinishReason.TOOL_CALLS,
  content_filter: FinishReason.CONTENT_FILTER,
};

/** A status from the script form; `fallback` is the message when it gives none. */
export function compileStatus(e: ErrorInput, fallback: string): CallStatus {
  const code = typeof e.code === "number" ? e.code : Code[e.code as CodeName];
  return {
    code,
    message: e.message ?? fallback,
    trailers: Object.entries(e.trailers ?? {}).map(([k, v]) => [k, k.endsWith("-bin") ? canonicalBase64(v) : v] as const),
  };
}

/**
 * A `-bin` trailer's base64 as every port gives it back: padded. The script may leave padding
 * off; the bytes travel, so the episode, the in-process port and a gRPC client's base64 agree.
 */
function canonicalBase64(value: string): string {
  return Buffer.from(value, "base64").toString("base64");
}

function describeAction(a: Action): string {
  switch (a.kind) {
    case "reply": {
      const parts: string[] = [];
      const text = a.reply.text.literal;
      if (text === undefined) parts.push("a templated reply");
      else if (text) parts.push(`reply ${JSON.stringify(text.length > 30 ? `${text.slice(0, 30)}…` : text)}`);
      if (a.reply.toolCalls.length) parts.push(`calls ${a.reply.toolCalls.map((t) => t.name).join(", ")}`);
      if (a.brk) parts.push(`breaks after ${a.brk.afterChunks} chunks (${a.brk.then})`);
      return parts.join(", ") || "an empty reply";
    }
    case "error":
      return `error ${Object.keys(Code).find((k) => Code[k as CodeName] === a.status.code) ?? a.status.code}`;
    default:
      return a.kind;
  }
}

/**
 * A stream break from the script form, at `path`: its status (UNAVAILABLE by default, its
 * message naming `who` broke it) checked as any status is. A script's entries and fault plans
 * both break through it.
 */
export function compileBreak(b: BreakInput, path: (string | number)[], report: Report, who: string): CompiledBreak {
  if (b.then !== "error" && b.error)
    report(path, `error is only read with then: error, not then: ${b.then}`, "remove error, or set then: error", { key: "error" });
  if (b.error) checkStatus(b.error, [...path, "error"], report);
  const message = `stream broken by ${who} after ${b.after_chunks} chunks`;
  return { afterChunks: b.after_chunks, then: b.then, status: b.error ? compileStatus(b.error, message) : { code: Code.UNAVAILABLE, message, trailers: [] } };
}

/** Compiles one entry of a list, `ref` naming it (`entries[2]`); undefined when it cannot run at all. */
export function compileEntry(
  e: EntryInput,
  path: (string | number)[],
  ref: string,
  defaults: { latency: { first: number; per: number }; chunking: Chunking },
  report: Report,
): CompiledEntry | undefined {
  const actions = (["reply", "error", "timeout", "hang"] as const).filter((k) => e[k] !== undefined);
  if (actions.length === 0) {
    report(
      path,
      "the entry has no action: expected one of reply, error, timeout or hang",
      "add `reply: ...`, `error: {code: ...}`, `timeout: true` or `hang: true`",
    );
    return undefined;
  }
  if (actions.length > 1) {
    report(
      path,
      `the entry has ${actions.length} actions (${actions.join(", ")}): expected exactly one`,
      "an entry answers one way: split it into one entry per action, or remove all but one",
      { key: actions[1]! },
    );
  }
  // Two actions cannot run, but each is still checked: every mistake of the entry in one report.
  const runnable = actions.length === 1;
  if (e.times !== undefined && e.repeat) {
    report(path, `times: ${e.times} and repeat: true contradict each other`, "keep times for a fixed number of uses, or repeat: true for no limit", {
      key: "times",
    });
  }
  if (e.break !== undefined && e.reply === undefined) {
    report(
      path,
      `break needs a reply to break, but the entry's action is ${actions[0]}`,
      "give the entry a reply to stream, or remove break (an error ends the call at once)",
      { key: "break" },
    );
  }
  const brk = e.break ? compileBreak(e.break, [...path, "break"], report, "the script") : undefined;

  let captures: CaptureInfo | undefined;
  let matcher: Matcher | undefined;
  if (e.match) {
    const compiled = compileMatch(e.match, [...path, "match"], report);
    if (!compiled) return undefined;
    matcher = compiled.matcher;
    if (compiled.regex) captures = { groups: compiled.regex.groups, names: compiled.regex.names };
  }
  const latency = compileLatency(e.latency, defaults.latency, [...path, "latency"], report);

  let action: Action;
  if (e.reply !== undefined) {
    const r = typeof e.reply === "string" ? { text: e.reply } : e.reply;
    const replyPath = typeof e.reply === "string" ? [...path, "reply"] : [...path, "reply", "text"];
    // With explicit chunks and no text, the text is the chunks joined: nothing to keep in step.
    const textSource = r.text ?? r.chunks?.join("") ?? "";
    const text = compileTemplate(textSource, captures, (m, h, n) =>
      report(r.text === undefined && r.chunks ? [...path, "reply", "chunks"] : replyPath, m, h, { ...(n ? { needle: n } : {}) }),
    );
    let chunks: Template[] | undefined;
    if (r.chunks) {
      // Chunks that join to the text hold the text's variables, already checked (and reported
      // once) above; chunks that do not join are reported by checkChunks.
      chunks = r.chunks.map((c) => compileTemplate(c, captures, () => {}));
      checkChunks(r.chunks, textSource, [...path, "reply"], report);
      if (r.chunking !== undefined)
        report([...path, "reply"], "chunking is ignored when chunks are given", "give chunks or chunking, not both", { key: "chunking" });
    }
    const toolCalls = (r.tool_calls ?? []).map((t, i) => {
      const args = compileArguments(t.arguments, captures, (p, m, h) => report([...path, "reply", "tool_calls", i, "arguments", ...p], m, h));
      return { name: t.name, id: t.id, arguments: args.render, literalArguments: args.literal };
    });
    const finishReason = r.finish_reason ? finishReasons[r.finish_reason]! : toolCalls.length ? FinishReason.TOOL_CALLS : FinishReason.STOP;
    const usage: CompiledReply["usage"] = {};
    if (r.usage?.input_tokens !== undefined) usage.input = r.usage.input_tokens;
    if (r.usage?.output_tokens !== undefined) usage.output = r.usage.output_tokens;
    const reply: CompiledReply = { text, chunks, toolCalls, finishReason, usage, chunking: compileChunking(r.chunking, defaults.chunking) };
    if (brk) checkBreak(reply, brk.afterChunks, [...path, "break"], report);
    action = { kind: "reply", reply, brk };
  } else if (e.error !== undefined) {
    checkStatus(e.error, [...path, "error"], report);
    action = { kind: "error", status: compileStatus(e.error, `scripted error at ${ref}`) };
  } else if (e.timeout) {
    action = { kind: "timeout" };
  } else {
    action = { kind: "hang" };
  }
  const request = e.request ? compileRequestCheck(e.request, [...path, "request"], report) : undefined;
  if (!runnable) return undefined;
  const limit = e.repeat ? Infinity : (e.times ?? 1);
  const summary = `${ref}${e.name ? ` (${e.name})` : ""}: ${matcher ? `when ${matcher.summary}, ` : ""}${describeAction(action)}`;
  return {
    ref,
    name: e.name,
    limit,
    limited: !e.repeat,
    matcher,
    ...(request ? { request } : {}),
    firstByteMs: latency.first,
    perChunkMs: latency.per,
    action,
    summary,
  };
}
