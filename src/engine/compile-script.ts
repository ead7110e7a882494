import { FinishReason } from "../../gen/modelstub/v1/model_pb.js";
import { compileMatcher, type Matcher } from "./match-request.js";
import { parseDuration } from "./parse-duration.js";
import type { ChunkingInput, EntryInput, ErrorInput, LatencyInput, ListInput, ScriptInput } from "./script-schema.js";
import { Code, type CodeName } from "./status-code.js";
import { compileTemplate, type CaptureInfo, type Template } from "./template.js";

/** Reports a semantic problem at a path of the script. */
export type Report = (path: (string | number)[], message: string, hint?: string) => void;

/** A status a call ends with, as data: the transports turn it into a wire status. */
export interface CallStatus {
  code: number;
  message: string;
  /** Trailing metadata, in script order. */
  trailers: readonly (readonly [string, string])[];
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
  return { code, message: e.message ?? fallback, trailers: Object.entries(e.trailers ?? {}) };
}

function compileLatency(l: LatencyInput | undefined, inherited: { first: number; per: number }): { first: number; per: number } {
  if (l === undefined) return inherited;
  if (typeof l === "number" || typeof l === "string") return { first: parseDuration(l)!, per: inherited.per };
  const per =
    l.per_chunk !== undefined
      ? parseDuration(l.per_chunk)!
      : l.chunks_per_second !== undefined
        ? Math.round(1000 / l.chunks_per_second)
        : inherited.per;
  return { first: l.first_byte !== undefined ? parseDuration(l.first_byte)! : inherited.first, per };
}

function compileChunking(c: ChunkingInput | undefined, inherited: Chunking): Chunking {
  if (c === undefined) return inherited;
  if (c === "words" || c === "none") return { kind: c };
  return { kind: "chars", n: c.chars };
}

function regexInfo(source: string): CaptureInfo {
  // Count groups by asking the engine itself: a regex that also matches "" gives every group.
  const groups = new RegExp(`${source}|`).exec("")!.length - 1;
  const names = [...source.matchAll(/\(\?<([A-Za-z_$][\w$]*)>/g)].map((m) => m[1]!);
  return { groups, names };
}

/** Renders a tool call's arguments: a mapping's string leaves are templates, then JSON. */
function compileArguments(
  args: unknown,
  captures: CaptureInfo | undefined,
  fail: (path: (string | number)[], message: string, hint?: string) => void,
): { render: CompiledToolCall["arguments"]; literal: string | undefined } {
  if (args === undefined) return { render: () => "{}", literal: "{}" };
  if (typeof args === "string") {
    const t = compileTemplate(args, captures, (m, h) => fail([], m, h));
    if (t.literal !== undefined) {
      try {
        JSON.parse(t.literal);
      } catch {
        fail([], "arguments text is not valid JSON", "write the arguments as a mapping and modelstub writes the JSON");
      }
    }
    return { render: (c) => t.render(c), literal: t.literal };
  }
  let dynamic = false;
  const build = (value: unknown, path: (string | number)[]): ((c: import("./template.js").TemplateContext) => unknown) => {
    if (typeof value === "string") {
      const t = compileTemplate(value, captures, (m, h) => fail(path, m, h));
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
  if (actions.length !== 1) {
    report(
      path,
      actions.length === 0 ? "the entry has no action" : `the entry has ${actions.length} actions (${actions.join(", ")}); it needs exactly one`,
      "give exactly one of reply, error, timeout: true, hang: true",
    );
    return undefined;
  }
  if (e.times !== undefined && e.repeat) report([...path, "times"], "times and repeat: true contradict each other", "drop one of them");
  if (e.break !== undefined && e.reply === undefined) report([...path, "break"], "break needs a reply to break", "add a reply, or use error/hang for a call that fails at once");
  if (e.break && e.break.then !== "error" && e.break.error) report([...path, "break", "error"], `error is only read with then: error, not then: ${e.break.then}`);

  let captures: CaptureInfo | undefined;
  let matcher: Matcher | undefined;
  if (e.match) {
    if (e.match.regex !== undefined) {
      try {
        new RegExp(e.match.regex);
        captures = regexInfo(e.match.regex);
      } catch (err) {
        report([...path, "match", "regex"], `invalid regex: ${(err as Error).message.replace(/^Invalid regular expression: /, "")}`, "regexes are JavaScript regexes; escape ( ) [ ] { } . * + ? with a backslash");
        return undefined;
      }
    }
    matcher = compileMatcher(e.match);
  }
  const latency = compileLatency(e.latency, defaults.latency);

  let action: Action;
  if (e.reply !== undefined) {
    const r = typeof e.reply === "string" ? { text: e.reply } : e.reply;
    const replyPath = typeof e.reply === "string" ? [...path, "reply"] : [...path, "reply", "text"];
    const text = compileTemplate(r.text ?? "", captures, (m, h) => report(replyPath, m, h));
    let chunks: Template[] | undefined;
    if (r.chunks) {
      chunks = r.chunks.map((c, i) => compileTemplate(c, captures, (m, h) => report([...path, "reply", "chunks", i], m, h)));
      if (r.chunks.join("") !== (r.text ?? "")) {
        report([...path, "reply", "chunks"], "the chunks do not join to the reply text", "the chunks must concatenate exactly to the text");
      }
      if (r.chunking !== undefined) report([...path, "reply", "chunking"], "chunking is ignored when chunks are given", "give chunks or chunking, not both");
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
    action = { kind: "reply", reply, brk };
  } else if (e.error !== undefined) {
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
  if (entries.length === 0) report(entriesPath, "the list has no entries", "add at least one entry, or remove the list");
  return { key, label, onExhausted, entries: compiled };
}

const stepIdPattern = /^[A-Za-z0-9._:/-]{1,128}$/;

/** Compiles a validated script; semantic problems go to `report` at their paths. */
export function compileScript(input: ScriptInput, source: string, report: Report): CompiledScript {
  if (input.entries === undefined && input.steps === undefined) {
    report([], "the script has neither entries nor steps", "add `entries:` with a list of replies");
  }
  const d = input.defaults ?? {};
  const defaults = {
    latency: compileLatency(d.latency, { first: 0, per: 0 }),
    chunking: compileChunking(d.chunking, { kind: "words" }),
    onExhausted: (d.on_exhausted ?? "fail") as OnExhausted,
  };
  const lists = new Map<string, CompiledList>();
  if (input.entries !== undefined) lists.set("", compileList(input.entries, ["entries"], "", "entries", defaults, report));
  for (const [step, list] of Object.entries(input.steps ?? {})) {
    if (!stepIdPattern.test(step)) {
      report(["steps", step], `step id ${JSON.stringify(step)} has characters outside A-Z a-z 0-9 . _ : / -`, "step ids travel in metadata: keep them plain");
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
  const seen = new Set<string>();
  (input.models ?? []).forEach((m, i) => {
    if (seen.has(m.id)) report(["models", i, "id"], `model ${JSON.stringify(m.id)} is declared twice`);
    seen.add(m.id);
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
