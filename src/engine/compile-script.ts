import { FinishReason } from "../../gen/modelstub/v1/model_pb.js";
import { checkStatus } from "./check-status.js";
import { compileRegex, type ScriptRegex } from "./compile-regex.js";
import { compileMatcher, type Matcher } from "./match-request.js";
import { maxDurationMs, parseDuration } from "./parse-duration.js";
import type { ChunkingInput, EntryInput, ErrorInput, LatencyInput, ListInput, ScriptInput } from "./script-schema.js";
import { Code, type CodeName } from "./status-code.js";
import { stepIdPattern } from "./check-step-id.js";
import { findJsonError } from "./find-json-error.js";
import { splitChunks } from "./split-chunks.js";
import { compileTemplate, type CaptureInfo, type Template } from "./template.js";

/**
 * Reports a semantic problem at a path of the script. `where.key` points at that key of the
 * mapping at `path` (`times` of an entry) rather than at the mapping; `where.needle` points at
 * that text inside the node (a `{{variable}}` inside a long reply).
 */
export type Report = (path: (string | number)[], message: string, hint?: string, where?: { key?: string; needle?: string }) => void;

/** A status a call ends with, as data: the transports turn it into a wire status. */
export interface CallStatus {
  code: number;
  message: string;
  /** Trailing metadata, in script order. */
  trailers: readonly (readonly [string, string])[];
  /**
   * false for the stub's own limits (the session and episode caps): only a reset or a restart
   * lifts them, so sending the same call again cannot help. The HTTP front tells clients with
   * `x-should-retry: false`. Unset for scripted statuses: those mean what the script says.
   */
  retryable?: false;
}

/** How to cut text into stream chunks. */
export type Chunking = { kind: "words" } | { kind: "none" } | { kind: "chars"; n: number };

/** A tool call of a reply, ready to render. */
export interface CompiledToolCall {
  name: string;
  id: string | undefined;
  arguments: (ctx: import("./template.js").TemplateContext) => string;
  /** The arguments text when no template is involved (computed once at load). */
  literalArguments: string | undefined;
}

export interface CompiledReply {
  text: Template;
  /** Explicit chunks, each a template; they join to the text. */
  chunks: Template[] | undefined;
  toolCalls: CompiledToolCall[];
  finishReason: FinishReason;
  usage: { input?: number; output?: number };
  chunking: Chunking;
}

export interface CompiledBreak {
  afterChunks: number;
  then: "error" | "hang" | "drop";
  status: CallStatus;
}

export type Action =
  | { kind: "reply"; reply: CompiledReply; brk: CompiledBreak | undefined }
  | { kind: "error"; status: CallStatus }
  | { kind: "timeout" }
  | { kind: "hang" };

/** One entry, with everything a call needs precomputed. */
export interface CompiledEntry {
  /** Where it is in the script, like `entries[2]` or `steps.plan[0]`. */
  ref: string;
  name: string | undefined;
  /** Uses before it is spent; Infinity when it repeats. */
  limit: number;
  /** Whether verify lists it while unused (repeating entries are never "pending"). */
  limited: boolean;
  matcher: Matcher | undefined;
  firstByteMs: number;
  perChunkMs: number;
  action: Action;
  /** One line about the entry, for verify and miss messages. */
  summary: string;
}

export type OnExhausted = "fail" | "repeat-last" | "cycle";

export interface CompiledList {
  /** "" for the main list, else the step id. */
  key: string;
  /** `entries` or `steps.<id>`, as errors name it. */
  label: string;
  onExhausted: OnExhausted;
  entries: CompiledEntry[];
}

export interface DeclaredModel {
  id: string;
  name: string;
  ownedBy: string;
  contextLength: number;
  inputModalities: string[];
  outputModalities: string[];
  promptPrice: string;
  completionPrice: string;
}

/** A script ready to serve: validated, with every matcher, template and latency prepared. */
export interface CompiledScript {
  name: string;
  source: string;
  models: DeclaredModel[];
  /** Model named in replies when the request names none. */
  defaultModel: string;
  lists: ReadonlyMap<string, CompiledList>;
  entryCount: number;
}

const finishReasons: Record<string, FinishReason> = {
  stop: FinishReason.STOP,
  length: FinishReason.LENGTH,
  tool_calls: FinishReason.TOOL_CALLS,
  content_filter: FinishReason.CONTENT_FILTER,
};

function compileStatus(e: ErrorInput, fallback: string): CallStatus {
  const code = typeof e.code === "number" ? e.code : Code[e.code as CodeName];
  return { code, message: e.message ?? fallback, trailers: Object.entries(e.trailers ?? {}).map(([k, v]) => [k, k.endsWith("-bin") ? canonicalBase64(v) : v] as const) };
}

/**
 * A `-bin` trailer's base64 as every port gives it back: padded. The script may leave padding
 * off; the bytes travel, so the episode, the in-process port and a gRPC client's base64 agree.
 */
function canonicalBase64(value: string): string {
  return Buffer.from(value, "base64").toString("base64");
}

/** A declared wait in ms, refused past maxDurationMs (see there why); `what` names it in the message. */
function checkedDuration(ms: number, what: string, path: (string | number)[], report: Report): number {
  if (ms <= maxDurationMs) return ms;
  report(path, `${what} is longer than the longest wait, 24 days (${maxDurationMs} ms)`, "timers cannot wait longer; for a call that never answers, use hang: true");
  return maxDurationMs;
}

function rateWait(chunksPerSecond: number, path: (string | number)[], report: Report): number {
  const ms = Math.round(1000 / chunksPerSecond);
  return checkedDuration(ms, `chunks_per_second ${chunksPerSecond} (a wait of ${ms} ms per chunk)`, path, report);
}

function compileLatency(
  l: LatencyInput | undefined,
  inherited: { first: number; per: number },
  path: (string | number)[],
  report: Report,
): { first: number; per: number } {
  if (l === undefined) return inherited;
  const duration = (d: number | string, at: (string | number)[]) => {
    const ms = parseDuration(d)!;
    return checkedDuration(ms, typeof d === "number" ? `the duration ${d} ms` : `the duration ${JSON.stringify(d)} (${ms} ms)`, at, report);
  };
  if (typeof l === "number" || typeof l === "string") return { first: duration(l, path), per: inherited.per };
  if (l.per_chunk !== undefined && l.chunks_per_second !== undefined) {
    report(
      path,
      "per_chunk and chunks_per_second both set the wait between chunks: expected one of them",
      "keep per_chunk for a fixed wait (like 50ms), or chunks_per_second for a rate (like 20)",
      { key: "chunks_per_second" },
    );
  }
  const per =
    l.per_chunk !== undefined
      ? duration(l.per_chunk, [...path, "per_chunk"])
      : l.chunks_per_second !== undefined
        ? rateWait(l.chunks_per_second, [...path, "chunks_per_second"], report)
        : inherited.per;
  return { first: l.first_byte !== undefined ? duration(l.first_byte, [...path, "first_byte"]) : inherited.first, per };
}

function compileChunking(c: ChunkingInput | undefined, inherited: Chunking): Chunking {
  if (c === undefined) return inherited;
  if (c === "words" || c === "none") return { kind: c };
  return { kind: "chars", n: c.chars };
}

/** A value JSON-escaped, without its quotes: what goes between the quotes of a JSON string. */
const jsonEscape = (value: string) => JSON.stringify(value).slice(1, -1);

/**
 * Checks arguments written as a JSON text. Each `{{variable}}` must sit inside a JSON string:
 * its value goes in JSON-escaped, so a quote or a line break in it cannot break the JSON, and
 * the text is valid JSON at load time exactly when it is valid for every value.
 */
function checkArgumentsText(args: string, fail: (path: (string | number)[], message: string, hint?: string) => void): void {
  const variable = /\{\{[^{}]*\}\}/g;
  // Each variable stands in as a text of its own length, valid inside a JSON string and not
  // outside one; offsets of the JSON check are then offsets of the written text.
  const bad = findJsonError(args.replace(variable, (v) => "x".padEnd(v.length)));
  if (!bad) return;
  const outside = [...args.matchAll(variable)].find((m) => m.index === bad.offset);
  if (outside) {
    fail([], `${outside[0]} is outside a JSON string in the arguments text`, `put it inside double quotes, "${outside[0]}" (its value goes in JSON-escaped), or write the arguments as a mapping`);
  } else {
    fail([], `arguments text is not valid JSON: ${bad.message} at character ${bad.offset + 1}`, "write the arguments as a mapping, and modelstub writes the JSON for you");
  }
}

/** Renders a tool call's arguments: a mapping's string leaves are templates, then JSON. */
function compileArguments(
  args: unknown,
  captures: CaptureInfo | undefined,
  fail: (path: (string | number)[], message: string, hint?: string, needle?: string) => void,
): { render: CompiledToolCall["arguments"]; literal: string | undefined } {
  if (args === undefined) return { render: () => "{}", literal: "{}" };
  if (typeof args === "string") {
    const t = compileTemplate(args, captures, (m, h, n) => fail([], m, h, n));
    checkArgumentsText(args, fail);
    return { render: (c) => t.render(c, jsonEscape), literal: t.literal };
  }
  let dynamic = false;
  const build = (value: unknown, path: (string | number)[]): ((c: import("./template.js").TemplateContext) => unknown) => {
    if (typeof value === "string") {
      const t = compileTemplate(value, captures, (m, h, n) => fail(path, m, h, n));
      if (t.literal !== undefined) return () => value;
      dynamic = true;
      return (c) => t.render(c);
    }
    if (Array.isArray(value)) {
      const items = value.map((v, i) => build(v, [...path, i]));
      return (c) => items.map((f) => f(c));
    }
    if (value !== null && typeof value === "object") {
      const fields = Object.entries(value).map(([k, v]) => [k, build(v, [...path, k])] as const);
      return (c) => Object.fromEntries(fields.map(([k, f]) => [k, f(c)]));
    }
    return () => value;
  };
  const root = build(args, []);
  if (!dynamic) {
    const literal = JSON.stringify(args);
    return { render: () => literal, literal };
  }
  return { render: (c) => JSON.stringify(root(c)), literal: undefined };
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

function compileEntry(
  e: EntryInput,
  path: (string | number)[],
  ref: string,
  defaults: { latency: { first: number; per: number }; chunking: Chunking },
  report: Report,
): CompiledEntry | undefined {
  const actions = (["reply", "error", "timeout", "hang"] as const).filter((k) => e[k] !== undefined);
  if (actions.length === 0) {
    report(path, "the entry has no action: expected one of reply, error, timeout or hang", "add `reply: ...`, `error: {code: ...}`, `timeout: true` or `hang: true`");
    return undefined;
  }
  if (actions.length > 1) {
    report(
      path,
      `the entry has ${actions.length} actions (${actions.join(", ")}): expected exactly one`,
      "an entry answers one way: split it into one entry per action, or remove all but one",
      { key: actions[1]! },
    );
    return undefined;
  }
  if (e.times !== undefined && e.repeat) {
    report(path, `times: ${e.times} and repeat: true contradict each other`, "keep times for a fixed number of uses, or repeat: true for no limit", { key: "times" });
  }
  if (e.break !== undefined && e.reply === undefined) {
    report(path, `break needs a reply to break, but the entry's action is ${actions[0]}`, "give the entry a reply to stream, or remove break (an error ends the call at once)", { key: "break" });
  }
  if (e.break && e.break.then !== "error" && e.break.error) {
    report([...path, "break"], `error is only read with then: error, not then: ${e.break.then}`, "remove error, or set then: error", { key: "error" });
  }

  let captures: CaptureInfo | undefined;
  let matcher: Matcher | undefined;
  if (e.match) {
    let regex: ScriptRegex | undefined;
    if (e.match.regex !== undefined) {
      const compiled = compileRegex(e.match.regex, e.match.ignore_case === true);
      if ("problem" in compiled) {
        report([...path, "match", "regex"], compiled.problem.message, compiled.problem.hint);
        return undefined;
      }
      regex = compiled.regex;
      captures = { groups: regex.groups, names: regex.names };
    }
    matcher = compileMatcher(e.match, regex);
  }
  const latency = compileLatency(e.latency, defaults.latency, [...path, "latency"], report);

  let action: Action;
  if (e.reply !== undefined) {
    const r = typeof e.reply === "string" ? { text: e.reply } : e.reply;
    const replyPath = typeof e.reply === "string" ? [...path, "reply"] : [...path, "reply", "text"];
    // With explicit chunks and no text, the text is the chunks joined: nothing to keep in step.
    const textSource = r.text ?? r.chunks?.join("") ?? "";
    const text = compileTemplate(textSource, captures, (m, h, n) => report(r.text === undefined && r.chunks ? [...path, "reply", "chunks"] : replyPath, m, h, { ...(n ? { needle: n } : {}) }));
    let chunks: Template[] | undefined;
    if (r.chunks) {
      // Chunks that join to the text hold the text's variables, already checked (and reported
      // once) above; chunks that do not join are reported by checkChunks.
      chunks = r.chunks.map((c) => compileTemplate(c, captures, () => {}));
      checkChunks(r.chunks, textSource, [...path, "reply"], report);
      if (r.chunking !== undefined) report([...path, "reply"], "chunking is ignored when chunks are given", "give chunks or chunking, not both", { key: "chunking" });
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
    const brk = e.break
      ? {
          afterChunks: e.break.after_chunks,
          then: e.break.then,
          status: e.break.error
            ? compileStatus(e.break.error, `stream broken by the script after ${e.break.after_chunks} chunks`)
            : { code: Code.UNAVAILABLE, message: `stream broken by the script after ${e.break.after_chunks} chunks`, trailers: [] },
        }
      : undefined;
    if (brk) checkBreak(reply, brk.afterChunks, [...path, "break"], report);
    if (e.break?.error) checkStatus(e.break.error, [...path, "break", "error"], report);
    action = { kind: "reply", reply, brk };
  } else if (e.error !== undefined) {
    checkStatus(e.error, [...path, "error"], report);
    action = { kind: "error", status: compileStatus(e.error, `scripted error at ${ref}`) };
  } else if (e.timeout) {
    action = { kind: "timeout" };
  } else {
    action = { kind: "hang" };
  }
  const limit = e.repeat ? Infinity : (e.times ?? 1);
  const summary = `${ref}${e.name ? ` (${e.name})` : ""}: ${matcher ? `when ${matcher.summary}, ` : ""}${describeAction(action)}`;
  return { ref, name: e.name, limit, limited: !e.repeat, matcher, firstByteMs: latency.first, perChunkMs: latency.per, action, summary };
}

function compileList(
  list: ListInput,
  path: (string | number)[],
  key: string,
  label: string,
  defaults: { latency: { first: number; per: number }; chunking: Chunking; onExhausted: OnExhausted },
  report: Report,
): CompiledList {
  const entries = Array.isArray(list) ? list : list.entries;
  const entriesPath = Array.isArray(list) ? path : [...path, "entries"];
  const onExhausted = (Array.isArray(list) ? undefined : list.on_exhausted) ?? defaults.onExhausted;
  const compiled: CompiledEntry[] = [];
  entries.forEach((e, i) => {
    const c = compileEntry(e, [...entriesPath, i], `${label}[${i}]`, defaults, report);
    if (c) compiled.push(c);
  });
  if (entries.length === 0) report(entriesPath, "the list has no entries: expected at least one", "add an entry like `- reply: ...`, or remove the list");
  return { key, label, onExhausted, entries: compiled };
}

/** Compiles a validated script; semantic problems go to `report` at their paths. */
export function compileScript(input: ScriptInput, source: string, report: Report): CompiledScript {
  if (input.entries === undefined && input.steps === undefined) {
    report([], "the script has neither entries nor steps: expected at least one of them", "add `entries:` with a list of replies, or `steps:` with a list per step id");
  }
  const d = input.defaults ?? {};
  const defaults = {
    latency: compileLatency(d.latency, { first: 0, per: 0 }, ["defaults", "latency"], report),
    chunking: compileChunking(d.chunking, { kind: "words" }),
    onExhausted: (d.on_exhausted ?? "fail") as OnExhausted,
  };
  const lists = new Map<string, CompiledList>();
  if (input.entries !== undefined) lists.set("", compileList(input.entries, ["entries"], "", "entries", defaults, report));
  for (const [step, list] of Object.entries(input.steps ?? {})) {
    if (!stepIdPattern.test(step)) {
      report(
        ["steps"],
        `step id ${JSON.stringify(step)} ${step.length > 128 ? "is longer than 128 characters" : "has characters outside A-Z a-z 0-9 . _ : / -"}`,
        `step ids travel in gRPC metadata: use plain ones like ${JSON.stringify(step.replace(/[^A-Za-z0-9._:/-]+/g, "-").slice(0, 128) || "plan")}`,
        { key: step },
      );
    }
    lists.set(step, compileList(list, ["steps", step], step, `steps.${step}`, defaults, report));
  }
  const models: DeclaredModel[] = (input.models ?? []).map((m) => ({
    id: m.id,
    name: m.name ?? m.id,
    ownedBy: m.owned_by ?? "modelstub",
    contextLength: m.context_length ?? 0,
    inputModalities: m.input_modalities ?? ["text"],
    outputModalities: m.output_modalities ?? ["text"],
    promptPrice: m.prompt_price ?? "0",
    completionPrice: m.completion_price ?? "0",
  }));
  const seen = new Map<string, number>();
  (input.models ?? []).forEach((m, i) => {
    const first = seen.get(m.id);
    if (first !== undefined) report(["models", i, "id"], `model ${JSON.stringify(m.id)} is declared twice: expected unique ids`, `models[${first}] declares it first; rename or remove one`);
    else seen.set(m.id, i);
  });
  let entryCount = 0;
  for (const l of lists.values()) entryCount += l.entries.length;
  return {
    name: input.name ?? source,
    source,
    models,
    defaultModel: d.model ?? models[0]?.id ?? "modelstub",
    lists,
    entryCount,
  };
}

/** Explicit chunks must join to the text, and no `{{variable}}` may straddle two chunks. */
function checkChunks(chunks: readonly string[], text: string, path: (string | number)[], report: Report): void {
  const joined = chunks.join("");
  if (joined !== text) {
    const clip = (t: string) => JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}…` : t);
    report([...path, "chunks"], `the chunks join to ${clip(joined)}, but the text is ${clip(text)}`, "the chunks must concatenate exactly to the text (or leave text out: it is then the chunks joined)");
    return;
  }
  let offset = 0;
  const cuts = new Set(chunks.slice(0, -1).map((c) => (offset += c.length)));
  for (const m of text.matchAll(/\{\{[^{}]*\}\}/g)) {
    for (let cut = m.index + 1; cut < m.index + m[0].length; cut++) {
      if (cuts.has(cut)) {
        report([...path, "chunks"], `the template variable ${m[0]} is split across two chunks`, "keep each {{variable}} inside one chunk", { needle: m[0].slice(0, 2) });
        return;
      }
    }
  }
}

/** A break after more chunks than a literal reply streams would never fire: say so at load. */
function checkBreak(reply: CompiledReply, afterChunks: number, path: (string | number)[], report: Report): void {
  const text = reply.chunks ? reply.chunks.map((c) => c.literal) : [reply.text.literal];
  if (text.some((t) => t === undefined) || reply.toolCalls.some((t) => t.literalArguments === undefined)) return;
  const textChunks = reply.chunks ? reply.chunks.length : splitChunks(reply.text.literal!, reply.chunking).length;
  const total = reply.toolCalls.reduce((n, t) => n + 1 + splitChunks(t.literalArguments!, reply.chunking).length, textChunks);
  if (afterChunks > total) {
    report(path, `after_chunks is ${afterChunks}, but the reply streams only ${total} chunk${total === 1 ? "" : "s"}, so the break never happens`, `use after_chunks from 0 to ${total}`, { key: "after_chunks" });
  }
}
