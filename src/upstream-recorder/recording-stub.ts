// Longer than 250 lines because it is one Stub over one state: the calls proxied upstream,
// their recording as script entries, and the script that lists the upstream's models.
import type { CallInput } from "../engine/call-input.js";
import type { CallResult } from "../engine/call-result.js";
import type { Stub } from "../engine/stub.js";
import type { CompiledScript, DeclaredModel } from "../script/compiled-script.js";
import { loadScriptText } from "../script/load-script.js";
import type { DraftEntry, ScriptDraft } from "../script/write-script.js";
import { Code } from "../shared/status-code.js";
import { answerEntry } from "./answer-entry.js";
import { fitEntry } from "./fit-entry.js";
import { recordEntry, shutdownEntry, type EntryOptions } from "./record-entry.js";
import { scrub } from "./redact.js";
import { ToolIds } from "./tool-ids.js";
import type { Upstream } from "./upstream.js";
import { requestMatchOf, type MatchKind } from "../script/request-match-of.js";
import { PriorEntries, type PriorScript } from "./prior-script.js";

/** What the recorder has recorded so far. */
export interface Recording {
  /** The session recorded (the first that called), or undefined before the first call. */
  readonly session: string | undefined;
  readonly calls: number;
  /**
   * The calls whose upstream answer could not be written as an entry (a `{{`, arguments that are
   * not JSON, an answer past the size a script may hold), each "call N (...): why": the client
   * and the script got an INTERNAL error in its place. `record` exits 1 when there are any.
   */
  readonly unrecorded: readonly string[];
  /**
   * The reply texts kept beside the script (`text_file`), by the name the script gives them,
   * relative to its folder: texts too long to sit in the script well.
   */
  readonly textFiles: ReadonlyMap<string, string>;
  /** The script so far, ready for writeScript. */
  draft(): ScriptDraft;
}

/** Options of the recording stub. */
export interface RecordingStubOptions extends EntryOptions {
  upstream: Upstream;
  /**
   * The stub behind everything but model calls (ControlService, model lists): the fronts take a
   * whole Stub, and the recorder answers model calls only.
   */
  inner: Stub;
  /** The model replies name when a request names none, as the written script's `defaults.model`. */
  defaultModel: string;
  /** The folder, relative to the script's, that long reply texts go to as `text_file`s (default `replies`). */
  textFileDir?: string;
  /**
   * What each entry keeps of the request it answered, as `request:` (record --match): readable
   * (default), digest, or none (no `request:` and no `replay:`, as before fingerprints).
   */
  match?: MatchKind;
  /**
   * A script to extend (record --record-mode new-episodes): a request one of its unused entries
   * matches is answered from that entry, as a cassette answers; the others go upstream and are
   * appended to their lists. The script written holds its entries, then the new ones, and says
   * `replay: {mode: unordered}`.
   */
  prior?: PriorScript;
  /** Told after every recorded call (the CLI writes the script then). */
  onRecorded?: (recording: Recording) => void;
}

/**
 * A script that lists `ids` as its models and answers nothing of note: what the recorder's own
 * stub serves model lists and ControlService from, compiled as a written `models:` is.
 */
export function listingScript(ids: readonly string[]): CompiledScript {
  return loadScriptText(
    `name: modelstub record\nmodels: ${JSON.stringify(ids.map((id) => ({ id })))}\nentries: [{ repeat: true, reply: "" }]\n`,
    "modelstub record",
  );
}

/**
 * A Stub whose model calls go to a real model: each call is sent upstream (tool call ids turned
 * back into the upstream's), its answer becomes the next entry of its list (the step's, or the
 * main list), and the client is answered from that entry as a replay of the script will answer
 * it. Calls run one at a time, in arrival order, so entries, ids and the declared timeline are
 * those of a sequential replay. One session is recorded: the first to call; others are refused.
 */
export function createRecordingStub(o: RecordingStubOptions): Stub & { recording: Recording; cutOffUpstream(): void } {
  const lists = new Map<string, DraftEntry[]>();
  const matchKind = o.match ?? "readable";
  const ids = new ToolIds();
  let session: string | undefined;
  let calls = 0;
  const unrecorded: string[] = [];
  const textFiles = new Map<string, string>();
  let timelineMs = 0;
  let running = 0;
  let draining = false;
  let usedDefaultModel = false;
  // The models the client's requests named, in first-use order: the script's `models:`, and
  // what the recorder lists meanwhile. Not the upstream's own list: that can run to a hundred
  // models (OpenAI's) and a gRPC upstream may list none, while these are the ones the replay
  // must know, so the recorder lists while recording what the replay will list.
  const models: string[] = [];
  let declared: DeclaredModel[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  // Aborted when the recorder stops waiting for the upstream at shutdown, to tell that cut from the client's own.
  const shutdown = new AbortController();
  // The prior script's entries, written back in place, the new recordings after them.
  const prior = o.prior && new PriorEntries(o.prior);
  let replayed = 0;
  const priorEntries = prior?.count ?? 0;
  if (prior) {
    for (const [key, entries] of prior.drafts) lists.set(key, entries);
    for (const id of prior.models) if (!models.includes(id)) models.push(id);
    if (models.length > 0) declared = listingScript(models).models;
  }

  const recording: Recording = {
    get session() {
      return session;
    },
    get calls() {
      return calls;
    },
    unrecorded,
    textFiles,
    draft(): ScriptDraft {
      const header = prior
        ? [
            `Extended by \`modelstub record --record-mode new-episodes\` from ${o.upstream.describe}: ${calls} call${calls === 1 ? "" : "s"} of session "${session ?? "default"}", ${replayed} answered from the script, ${calls - replayed} recorded after its entries.`,
            "Replay: modelstub serve --script FILE; each request is answered by the first unused entry whose request it matches (replay mode unordered).",
          ]
        : [
            `Recorded by \`modelstub record\` from ${o.upstream.describe}: ${calls} call${calls === 1 ? "" : "s"} of session "${session ?? "default"}".`,
            `Replay: modelstub serve --script FILE, and send the same requests in order${session && session !== "default" ? ` in session "${session}"` : ""}.`,
          ];
      const name = prior?.script.input.name ?? `recorded from ${o.upstream.describe}`;
      const draft: ScriptDraft = {
        header,
        name,
        lists: [...lists].map(([key, entries]) => ({ key, entries, ...(prior?.onExhausted.has(key) ? { onExhausted: prior.onExhausted.get(key)! } : {}) })),
      };
      if (models.length > 0) draft.models = models.map((id) => ({ id }));
      // Appended entries come after the ones a replay of the latest conversation may skip: only the cassette's lookup finds them in order.
      if (prior) draft.replay = { mode: "unordered" };
      else if (matchKind !== "none") draft.replay = { mode: "strict" };
      if (prior?.script.input.defaults) draft.defaults = { ...prior.script.input.defaults, ...draft.defaults };
      // With `models:`, a script's default model is the first listed: one named in replies to
      // requests that named none is written out, even modelstub's own.
      if (usedDefaultModel && (o.defaultModel !== "modelstub" || models.length > 0)) draft.defaults = { model: o.defaultModel };
      return draft;
    },
  };

  const refuse = (code: number, message: string): CallResult => ({ kind: "status", status: { code, message, trailers: [] } });

  async function record(input: CallInput, arrivedAt: number): Promise<CallResult> {
    if (draining) return refuse(Code.UNAVAILABLE, "modelstub record is shutting down");
    session ??= input.session;
    if (input.session !== session) {
      return refuse(
        Code.FAILED_PRECONDITION,
        `modelstub record records one session, "${session}", and this call is in "${input.session}": record each session with its own recorder`,
      );
    }
    const fromRequest = input.request.stepId;
    const fromMetadata = input.stepFromMetadata ?? "";
    if (fromRequest && fromMetadata && fromRequest !== fromMetadata) {
      return refuse(
        Code.INVALID_ARGUMENT,
        `the request's step_id ${JSON.stringify(fromRequest)} and metadata x-modelstub-step ${JSON.stringify(fromMetadata)} disagree; send one of them`,
      );
    }
    const step = fromRequest || fromMetadata;
    let list = lists.get(step);
    if (!list) lists.set(step, (list = []));
    const sequence = ++calls;
    const ref = step ? `steps.${step}[${list.length}]` : `entries[${list.length}]`;
    if (!input.request.model) usedDefaultModel = true;
    else {
      // Scrubbed as all the recorder writes is (a key pasted as a model id stays out of the script).
      const id = scrub(input.request.model, o.redaction);
      if (!models.includes(id)) {
        models.push(id);
        // Compiled as the written script's `models:` will be, so both list the same fields.
        declared = listingScript(models).models;
      }
    }
    input.onStart?.({ sequence, startMs: timelineMs });
    const hit = prior?.take(step, input.request);
    if (hit) {
      // Answered from the script, as its replay answers it: the upstream never sees this call.
      replayed++;
      const answer = await answerEntry(hit, { session, sequence, ref: hit.ref, model: input.request.model || o.defaultModel, step }, input);
      timelineMs += answer.declaredMs;
      o.onRecorded?.(recording);
      return answer.result;
    }
    const signal = AbortSignal.any([input.signal, shutdown.signal]);
    const result = await o.upstream.call({
      method: input.method,
      request: ids.toUpstream(input.request),
      session,
      step,
      signal,
      budgetMs: (input.budgetMs ?? Infinity) - (performance.now() - arrivedAt),
    });
    const method = input.method === "stream" ? "GenerateStream" : "Generate";
    const where = `${prior ? "new-episodes run, " : ""}call ${sequence} (${method}${step ? `, step ${step}` : ""}) -> ${o.upstream.describe}`;
    // A stream cut off part-way comes back as a hang after its chunks: the shutdown's cut too.
    const cutOff = result.kind === "aborted" || (result.kind === "reply" && result.broke?.then === "hang");
    const cutByShutdown = cutOff && shutdown.signal.aborted && !input.signal.aborted;
    const recorded = cutByShutdown ? shutdownEntry(where) : recordEntry(result, where, o, input.method === "stream");
    const compiled = fitEntry(recorded, `${o.textFileDir ?? "replies"}/call-${sequence + priorEntries}.txt`, textFiles);
    if (recorded.unrecorded !== undefined) unrecorded.push(`${where}: ${recorded.unrecorded}`);
    // The request as the client sent it (modelstub's tool call ids, not the upstream's): what a replay gets.
    const request = requestMatchOf(input.request, matchKind, (t) => scrub(t, o.redaction));
    list.push({ comments: recorded.comments, entry: request ? { ...recorded.entry, request } : recorded.entry });
    if (result.kind === "reply" && compiled.action.kind === "reply" && compiled.action.reply.toolCalls.length > 0) {
      ids.remember(
        session,
        sequence,
        result.reply.toolCalls.map((c) => c.id),
      );
    }
    const model = input.request.model || o.defaultModel;
    const answer = await answerEntry(compiled, { session, sequence, ref, model, step }, input);
    timelineMs += answer.declaredMs;
    o.onRecorded?.(recording);
    return answer.result;
  }

  const call = (input: CallInput): Promise<CallResult> => {
    running++;
    // The client's deadline counts from its arrival: the time it waited behind earlier calls is spent.
    const arrivedAt = performance.now();
    const run = queue.then(() => record(input, arrivedAt));
    queue = run.catch(() => undefined);
    return run.catch((err): CallResult => refuse(Code.INTERNAL, `modelstub record: ${(err as Error).message}`)).finally(() => running--);
  };

  return {
    ...o.inner,
    // Spread copies properties, not the prototype's getters: the clock and script are read here.
    clock: o.inner.clock,
    script: o.inner.script,
    recording,
    call,
    // Not sent upstream, and not answered from the inner stub: its episode is not what is written.
    embed: () => ({
      kind: "status",
      status: {
        code: Code.UNIMPLEMENTED,
        message: "modelstub record records model calls only: POST /v1/embeddings is not recorded; serve a script to answer it (docs/embeddings.md)",
        trailers: [],
      },
    }),
    scriptOf: (name) => (declared.length > 0 ? { ...o.inner.scriptOf(name), models: declared } : o.inner.scriptOf(name)),
    inFlight: () => running,
    drain() {
      draining = true;
      o.inner.drain();
    },
    /** Stops waiting for the upstream: calls still waiting are answered and recorded UNAVAILABLE. */
    cutOffUpstream() {
      shutdown.abort("shutdown");
    },
  };
}
