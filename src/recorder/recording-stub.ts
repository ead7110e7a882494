import type { CallInput } from "../engine/call-input.js";
import type { CallResult } from "../engine/call-result.js";
import type { Stub } from "../engine/stub.js";
import type { CompiledScript, DeclaredModel } from "../script/compiled-script.js";
import { loadScriptText } from "../script/load-script.js";
import { ScriptError } from "../script/script-error.js";
import type { DraftEntry, ScriptDraft } from "../script/write-script.js";
import { Code } from "../shared/status-code.js";
import { answerEntry, compileRecordedEntry } from "./answer-entry.js";
import { recordEntry, shutdownEntry, type EntryOptions } from "./record-entry.js";
import { scrub } from "./redact.js";
import { ToolIds } from "./tool-ids.js";
import type { Upstream } from "./upstream.js";

/** A compile error's first problem, without the place (the entry is the recorder's, not a file). */
const problemOf = (err: unknown) => (err instanceof ScriptError && err.issues[0] ? err.issues[0].message : (err as Error).message.split("\n")[0]!);

/** A reply text longer than this, in UTF-8 bytes, is recorded as a `text_file` beside the script. */
const textFileFromBytes = 64 * 1024;

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
  /** Told after every recorded call (the CLI writes the script then). */
  onRecorded?: (recording: Recording) => void;
}

/**
 * A script that lists `ids` as its models and answers nothing of note: what the recorder's own
 * stub serves model lists and ControlService from, compiled as a written `models:` is.
 */
export function listingScript(ids: readonly string[]): CompiledScript {
  return loadScriptText(`name: modelstub record\nmodels: ${JSON.stringify(ids.map((id) => ({ id })))}\nentries: [{ repeat: true, reply: "" }]\n`, "modelstub record");
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
      const header = [
        `Recorded by \`modelstub record\` from ${o.upstream.describe}: ${calls} call${calls === 1 ? "" : "s"} of session "${session ?? "default"}".`,
        `Replay: modelstub serve --script FILE, and send the same requests in order${session && session !== "default" ? ` in session "${session}"` : ""}.`,
      ];
      const draft: ScriptDraft = { header, name: `recorded from ${o.upstream.describe}`, lists: [...lists].map(([key, entries]) => ({ key, entries })) };
      if (models.length > 0) draft.models = models.map((id) => ({ id }));
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
      return refuse(Code.FAILED_PRECONDITION, `modelstub record records one session, "${session}", and this call is in "${input.session}": record each session with its own recorder`);
    }
    const fromRequest = input.request.stepId;
    const fromMetadata = input.stepFromMetadata ?? "";
    if (fromRequest && fromMetadata && fromRequest !== fromMetadata) {
      return refuse(Code.INVALID_ARGUMENT, `the request's step_id ${JSON.stringify(fromRequest)} and metadata x-modelstub-step ${JSON.stringify(fromMetadata)} disagree; send one of them`);
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
    const signal = AbortSignal.any([input.signal, shutdown.signal]);
    const result = await o.upstream.call({ method: input.method, request: ids.toUpstream(input.request), session, step, signal, budgetMs: (input.budgetMs ?? Infinity) - (performance.now() - arrivedAt) });
    const method = input.method === "stream" ? "GenerateStream" : "Generate";
    const where = `call ${sequence} (${method}${step ? `, step ${step}` : ""}) -> ${o.upstream.describe}`;
    // A stream cut off part-way comes back as a hang after its chunks: the shutdown's cut too.
    const cutOff = result.kind === "aborted" || (result.kind === "reply" && result.broke?.then === "hang");
    const cutByShutdown = cutOff && shutdown.signal.aborted && !input.signal.aborted;
    const recorded = cutByShutdown ? shutdownEntry(where) : recordEntry(result, where, o, input.method === "stream");
    let compiled;
    // A long text goes beside the script, as a text_file: the script stays small enough to read
    // and to serve however long the answers (a script holds 512 KiB; a text_file up to 1 MiB).
    const reply = "reply" in recorded.entry && typeof recorded.entry.reply === "object" ? recorded.entry.reply : undefined;
    if (reply?.text !== undefined && Buffer.byteLength(reply.text, "utf8") > textFileFromBytes) {
      const name = `${o.textFileDir ?? "replies"}/call-${sequence}.txt`;
      textFiles.set(name, reply.text);
      const { text, ...rest } = reply;
      recorded.entry = { ...recorded.entry, reply: { ...rest, text_file: name } } as typeof recorded.entry;
      recorded.comments.push(`its text (${Buffer.byteLength(text, "utf8")} bytes) is in ${name}, beside this script`);
    }
    try {
      compiled = compileRecordedEntry(recorded.entry, textFiles);
    } catch (err) {
      const why = problemOf(err);
      const now = "reply" in recorded.entry && typeof recorded.entry.reply === "object" ? recorded.entry.reply : undefined;
      if (now?.chunks) {
        // The upstream's chunks (--keep-chunks) cost a line each: a stream of tens of thousands
        // of deltas passes the size an entry may hold where its text alone does not. The text
        // is kept, cut by the words rule, which is also what the client is answered with.
        const { chunks, ...rest } = now;
        recorded.entry = { ...recorded.entry, reply: rest } as typeof recorded.entry;
        recorded.comments.push(`--keep-chunks not kept: the upstream's ${chunks.length} chunks would pass the size an entry may hold (${why}); cut by the words rule`);
      }
      try {
        compiled = compileRecordedEntry(recorded.entry, textFiles);
      } catch (again) {
        // An answer past what a script and its text_file may hold (a text over 1 MiB): an error
        // stands in for it, said to the client, in the script, and by `record`'s exit status.
        const problem = `the answer cannot be written as a script entry: ${problemOf(again)}`;
        recorded.comments.push(`not recorded: ${problem}; the client got this error in its place`);
        recorded.entry = { error: { code: "INTERNAL", message: "modelstub record could not write this reply as a script entry" } };
        recorded.unrecorded = problem;
        textFiles.delete(`${o.textFileDir ?? "replies"}/call-${sequence}.txt`);
        compiled = compileRecordedEntry(recorded.entry);
      }
    }
    if (recorded.unrecorded !== undefined) unrecorded.push(`${where}: ${recorded.unrecorded}`);
    list.push({ comments: recorded.comments, entry: recorded.entry });
    if (result.kind === "reply" && compiled.action.kind === "reply" && compiled.action.reply.toolCalls.length > 0) {
      ids.remember(session, sequence, result.reply.toolCalls.map((c) => c.id));
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
    return run
      .catch((err): CallResult => refuse(Code.INTERNAL, `modelstub record: ${(err as Error).message}`))
      .finally(() => running--);
  };

  return {
    ...o.inner,
    // Spread copies properties, not the prototype's getters: the clock and script are read here.
    clock: o.inner.clock,
    script: o.inner.script,
    recording,
    call,
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
