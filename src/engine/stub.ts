import type { Episode, EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import type { Clock } from "./clock.js";
import type { CallStatus, CompiledFaultPlan, CompiledScript, ReplayMode } from "../script/compiled-script.js";
import type { CallInput } from "./call-input.js";
import type { EmbedInput, EmbedResult } from "./embed-input.js";
import type { CallLog } from "./call-log.js";
import type { CallResult } from "./call-result.js";
import type { EpisodeCloseReason } from "./episode-close-reason.js";
import type { Verification } from "./verify-session.js";
import type { EpisodePieces } from "./episode-pieces.js";
import type { CallEventListener } from "./call-event.js";

/*
 * What a stub is, as types: createStub (create-stub.ts) builds one. Apart, so the transports and
 * the library read the contract without the machinery.
 */

/** Options of a stub; defaults are filled in here, in one place. */
export interface StubOptions {
  /** The script every session starts with. */
  script: CompiledScript;
  /** Default: the real clock. Tests and `--clock virtual` pass a virtual one. */
  clock?: Clock;
  /** Sessions the stub keeps at most (default 1,000): more answer RESOURCE_EXHAUSTED, so a runaway client cannot grow memory without bound. */
  maxSessions?: number;
  /** Calls one episode records at most (default 100,000); then RESOURCE_EXHAUSTED until a reset. */
  maxEpisodeCalls?: number;
  /**
   * Bytes one episode records at most, counted as its calls encode in the .binpb (default
   * 64 MiB); then RESOURCE_EXHAUSTED until a reset. The call cap alone does not bound memory:
   * requests carry whole conversations, so a few hundred long ones can reach gigabytes.
   */
  maxEpisodeBytes?: number;
  /**
   * Who answers, in every answer's x-modelstub-instance header (default: host name and process
   * id, instance-id.ts); also the first part of every episode id. Never in an episode's bytes.
   */
  instance?: string;
  /**
   * How requests are held to the entries' recorded `request:` in every script this stub serves,
   * over each script's own `replay.mode` (serve --replay-mode); default: the script's.
   */
  replayMode?: ReplayMode;
  /** Told about every finished call (logs). */
  onCall?: (log: CallLog) => void;
  /**
   * Told when a session's episode closes by reset, reload, deletion or idle eviction (recording
   * to disk), once its cut-off calls are recorded, in the order the session's episodes closed
   * (a session deleted and opened again included). Episodes without calls are not told. A
   * returned promise is awaited: the reset, reload or deletion completes after it (so
   * ResetSession answers once the file is written), and its rejection becomes theirs.
   */
  onEpisodeClosed?: (episode: Episode, why: EpisodeCloseReason) => void | Promise<void>;
}

/** A session evictIdle() let go: its name, how long it had been idle, and its closing episode. */
export interface EvictedSession {
  name: string;
  /** Wall-clock ms since the session was last used. */
  idleMs: number;
  /** Resolves with the closed episode's calls once onEpisodeClosed is done; rejects as it does. */
  closed: Promise<number>;
}

/** The scripted model: sessions, their cursors and episodes, over one clock. */
export interface Stub {
  readonly clock: Clock;
  readonly script: CompiledScript;
  /** This stub's instance id (StubOptions.instance). */
  readonly instance: string;
  /**
   * The id of a session's open episode (x-modelstub-episode), or undefined for a session the
   * stub does not keep. A new id with every new episode: reset, reload, fault plan, deletion or
   * eviction and first use again, and a new process.
   */
  episodeIdOf(session: string): string | undefined;
  /** Runs one call; never rejects. */
  call(input: CallInput): Promise<CallResult>;
  /**
   * Runs one embeddings call (run-embed.ts): refused as a model call is (session name, draining,
   * the caps), else answered at once and recorded in the session's episode; never throws.
   */
  embed(input: EmbedInput): EmbedResult;
  /**
   * Replaces a session's script and starts it afresh, closing its episode like reset(). Calls
   * from the moment it is called run on the new script.
   */
  loadScript(session: string, script: CompiledScript): Promise<void>;
  /**
   * Sets a session's fault plan (undefined: none) and starts it afresh on its script, closing its
   * episode like reset(): the plan's calls are counted from the new episode's first call. A reset
   * or a script load later brings back the script's own plan (its `faults:`), if any.
   */
  setFaultPlan(session: string, plan: CompiledFaultPlan | undefined): Promise<number>;
  /**
   * Rewinds a session and opens a new episode at once: calls from now on start clean. Calls of
   * the closed episode still running are cut off (they end with CANCELLED and are recorded
   * as cancelled in the closed episode); once they are, the closed episode goes to
   * onEpisodeClosed. Resolves with how many calls it holds, cut-off calls included.
   */
  reset(session: string): Promise<number>;
  /**
   * Closes a session's episode like reset() (calls running in it are cut off with CANCELLED and
   * recorded in it) and forgets the session at once, freeing its slot under maxSessions: a call
   * naming it afterwards opens it afresh. Resolves with the closed episode's calls once it has
   * gone to onEpisodeClosed; rejects with a NOT_FOUND status for a session the stub does not keep.
   */
  deleteSession(session: string): Promise<number>;
  /**
   * Deletes every session with no call running that has not been used (no call started or
   * ended, no reset or reload) for `idleMs` of wall-clock time, as deleteSession() does. Operational
   * only: what an episode records never depends on it (an evicted session used again starts a new
   * episode, as after a reset). The caller handles each `closed` promise.
   */
  evictIdle(idleMs: number): EvictedSession[];
  episode(session: string): Episode;
  /** Call `sequence` (1-based) of the session's open episode, once recorded; undefined otherwise. */
  recordedCall(session: string, sequence: number): EpisodeCall | undefined;
  /** The episode's deterministic bytes. */
  episodeBytes(session: string): Uint8Array;
  /** The same bytes as their pieces, uncopied (episode-pieces.ts): for long work on a large episode. */
  episodePieces(session: string): EpisodePieces;
  verify(session: string): Verification;
  /**
   * Tells `listener` of every call of `session` that starts or ends from now on (WatchSession),
   * across its episodes, until the returned function is called. The session need not exist yet.
   */
  watch(session: string, listener: CallEventListener): () => void;
  /** Every session: its recorded calls, the calls running in its open episode, its script. */
  sessions(): { name: string; calls: number; running: number; scriptName: string }[];
  /** Every session's episode, for recording at shutdown. */
  episodes(): Episode[];
  /** Resolves once every episode being closed (reset, reload, deletion, eviction) has gone to onEpisodeClosed. */
  closing(): Promise<void>;
  /** The script a session is served from (the stub's script for a session not yet seen). */
  scriptOf(session: string): CompiledScript;
  /** Calls running right now, across sessions (for drain and leak checks). */
  inFlight(): number;
  /** Starts draining: calls from now on answer UNAVAILABLE; calls in flight go on. */
  drain(): void;
  /**
   * Ends every call in flight with `status` (a shutdown whose grace is over): each returns it to
   * its transport to write, and its episode records it (OUTCOME_CANCELLED with that status).
   * Returns how many calls it cut.
   */
  cutOff(status: CallStatus): number;
}
