/**
 * What a compiled script is, as types: the one door from the script language to the runtime.
 * The engine imports these types and nothing else of src/script, so it runs any script the
 * compiler hands it (or a test builds by hand) without knowing how text became one. It is
 * longer than 250 lines because it is that one door: every type the engine reads of a script.
 */
import type { FaultKind } from "../../gen/modelstub/v1/episode_pb.js";
import type { FinishReason, Message } from "../../gen/modelstub/v1/model_pb.js";
import type { Chunking } from "../shared/split-chunks.js";
import type { ScriptRegex } from "./compile-regex.js";
import type { RequestFingerprint } from "../shared/request-fingerprint.js";

export type { Chunking };

/** What matchers and templates read of a request, computed once per call in one pass. */
export interface RequestView {
  model: string;
  /**
   * Whether the request's model is one the script lists (its `models:`, else its default
   * model), or none at all: the `unknown_model` matcher reads it.
   */
  modelListed: boolean;
  /** Text of the last user message ("" when there is none). */
  lastUser: string;
  /** The request's messages, not copied: `conversation_contains` reads every user message. */
  messages: readonly Message[];
  /** Whether the last message of the conversation is a tool result. */
  lastIsToolResult: boolean;
  /** The tool the last message answers: the name of the call its id points to, else its name. */
  lastToolName: string;
  /** Text of the last tool result anywhere in the conversation ("" when there is none). */
  lastToolResult: string;
  /** Number of assistant messages so far: 0 on the first call of a conversation. */
  turn: number;
}

/** What a template can read while a call renders it. */
export interface TemplateContext {
  lastUser: string;
  lastToolResult: string;
  step: string;
  model: string;
  session: string;
  turn: number;
  /** Regex captures of the entry's matcher: index 0 is the whole match. */
  captures: RegExpExecArray | null;
}

/** A compiled template: literal text, or text with `{{variable}}` holes. */
export interface Template {
  /** The literal text when the template has no variables (the fast path). */
  readonly literal: string | undefined;
  /** Fills in the variables; `escapeValue`, when given, rewrites each variable's value first. */
  render(ctx: TemplateContext, escapeValue?: (value: string) => string): string;
}

/** A compiled matcher: every condition is prepared at load time, none is parsed per call. */
export interface Matcher {
  /** The regex captures when the request matches (an empty result when there is no regex), or null. */
  test(view: RequestView): RegExpExecArray | [] | null;
  /** The conditions the request fails, in words, for the "nearest candidates" of a miss. */
  failing(view: RequestView): string[];
  /** The whole matcher in words: `contains "weather", turn 1`. */
  readonly summary: string;
  readonly regex: ScriptRegex | undefined;
}

/** How a replay holds requests to the entries' recorded `request:` (docs/record.md). */
export type ReplayMode = "strict" | "unordered" | "order-only";

/** What a request check reads of a call's request, each computed once, when first asked. */
export interface RequestFacts {
  fingerprint(): RequestFingerprint;
  /** `sha256:HEX` of the canonical request. */
  digest(): string;
}

/** A compiled `request:`: the recorded request an entry answered, compared with a call's. */
export interface RequestCheck {
  /** How the call's request differs from the recorded one, in words; empty when it matches. */
  differences(facts: RequestFacts): string[];
}

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

/** A tool call of a reply, ready to render. */
export interface CompiledToolCall {
  name: string;
  id: string | undefined;
  arguments: (ctx: TemplateContext) => string;
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
  /** The recorded request (`request:`), which the replay mode holds calls to; undefined when none. */
  request?: RequestCheck | undefined;
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

/** What a fault does to a call: end it (error, timeout, hang), break its stream, or let it answer. */
export type FaultAction =
  | { kind: "error"; status: CallStatus }
  | { kind: "timeout" }
  | { kind: "hang" }
  | { kind: "break"; brk: CompiledBreak }
  | { kind: "answer" };

/** A fault ready to apply: its action, and the latency it declares in place of the entry's. */
export interface CompiledFault {
  action: FaultAction;
  /**
   * The fault's own waits, in place of the entry's; a wait it leaves undefined keeps the entry's
   * (answer, break) or is 0 (error, timeout, hang, which answer before any entry).
   */
  latency: { firstByteMs: number | undefined; perChunkMs: number | undefined } | undefined;
  /** What the episode records it as. */
  kind: FaultKind;
}

/**
 * Where a rule strikes. Counting is per episode, in call-sequence order. `clean` (`count: clean`)
 * counts only the calls no fault struck that left the script's entry in place, so occurrence K
 * is the K-th call of the clean run even after earlier faults caused retries.
 */
export type FaultPoint =
  | { kind: "call"; call: number }
  | { kind: "step"; step: string; occurrence: number; clean: boolean }
  | { kind: "match"; matcher: Matcher; occurrence: number; clean: boolean };

export interface CompiledFaultRule {
  /** Its place in the plan's `rules` (a rule that did not compile leaves a gap). */
  index: number;
  /** `rules[2]`: what the episode records. */
  ref: string;
  at: FaultPoint;
  fault: CompiledFault;
}

/** Chaos from a seed; the draws are specified in src/shared/chaos-draw.ts and docs/faults.md. */
export interface CompiledChaos {
  seed: bigint;
  /** Parts per million per kind, in the order error, timeout, hang, break, latency. */
  ppm: readonly number[];
  /** The faults each kind applies, in the same order; error is picked from `errors` by the second draw. */
  errors: readonly CompiledFault[];
  timeout: CompiledFault;
  hang: CompiledFault;
  break: CompiledFault;
  latency: CompiledFault;
  /** Faults per episode at most; Infinity without a budget. */
  budget: number;
  /** Step ids in scope; undefined for every step. */
  steps: ReadonlySet<string> | undefined;
  /** Methods in scope; undefined for both. */
  methods: ReadonlySet<"generate" | "stream"> | undefined;
}

/** A fault plan ready to apply: rules, or chaos (never both). */
export interface CompiledFaultPlan {
  name: string;
  /** Lowercase hex SHA-256 of the plan's canonical JSON. */
  digest: string;
  rules: readonly CompiledFaultRule[];
  chaos: CompiledChaos | undefined;
}

/** A vector the script's `embeddings:` gives one input text (docs/embeddings.md). */
export interface CompiledEmbedding {
  /** Where it is in the script, like `embeddings[2]`: what the episode records. */
  ref: string;
  /** The vector at its own length, normalized to unit length, as float32 (derive-embedding.ts). */
  vector: Float32Array;
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
  /** The script's `replay.mode`; undefined when it sets none (strict). */
  replayMode?: ReplayMode | undefined;
  /** The script's `faults:` section: the plan every session starts with. */
  faults?: CompiledFaultPlan | undefined;
  /** The script's `embeddings:`, by input text; undefined when it has none. */
  embeddings?: ReadonlyMap<string, CompiledEmbedding> | undefined;
}
