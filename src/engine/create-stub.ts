import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { createRealClock, type Clock } from "./clock.js";
import { checkStepIds } from "./check-step-id.js";
import type { CallStatus, CompiledScript } from "../script/compiled-script.js";
import { decodeEpisode, encodeEpisode } from "./encode-episode.js";
import type { CallInput } from "./call-input.js";
import type { CallLog } from "./call-log.js";
import type { CallResult } from "./call-result.js";
import { checkSessionName } from "./check-session-name.js";
import { limitStatus } from "./limit-status.js";
import { closedStatus, type EpisodeCloseReason } from "./episode-close-reason.js";
import { runCall } from "./run-call.js";
import { Session } from "./session.js";
import { verifySession, type Verification } from "./verify-session.js";
import { Code } from "../shared/status-code.js";

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
  /** Runs one call; never rejects. */
  call(input: CallInput): Promise<CallResult>;
  /**
   * Replaces a session's script and starts it afresh, closing its episode like reset(). Calls
   * from the moment it is called run on the new script.
   */
  loadScript(session: string, script: CompiledScript): Promise<void>;
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
  /** The episode's deterministic bytes. */
  episodeBytes(session: string): Uint8Array;
  verify(session: string): Verification;
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
}

const drainingStatus: CallStatus = { code: Code.UNAVAILABLE, message: "modelstub is shutting down: it takes no new calls", trailers: [] };

function episodeOf(name: string, session: Session | undefined): Episode {
  return decodeEpisode(name, session ? session.episode.recorded() : []);
}

const ignore = () => undefined;

/** Creates a stub serving `options.script`. */
export function createStub(options: StubOptions): Stub {
  const clock = options.clock ?? createRealClock();
  const maxSessions = options.maxSessions ?? 1000;
  const maxEpisodeCalls = options.maxEpisodeCalls ?? 100_000;
  const maxEpisodeBytes = options.maxEpisodeBytes ?? 64 * 1024 * 1024;
  const sessions = new Map<string, Session>();
  let inFlight = 0;
  let draining = false;

  const open = (name: string): Session | CallStatus => {
    let s = sessions.get(name);
    if (s) return s;
    const bad = checkSessionName(name);
    if (bad) return bad;
    if (sessions.size >= maxSessions) {
      return limitStatus(
        `session limit reached: the server keeps at most ${maxSessions} sessions (--max-sessions); free slots with ControlService.DeleteSession, let idle sessions go with --session-idle-timeout, reuse session names, or raise --max-sessions`,
      );
    }
    s = new Session(name, options.script);
    // A session deleted under this name may still be writing its last episode: this one's
    // episodes close behind it, so the name's files end with the latest episode.
    s.closing = retired.get(name) ?? s.closing;
    sessions.set(name, s);
    return s;
  };

  const closeEpisode = (s: Session, why: EpisodeCloseReason, script?: CompiledScript): Promise<number> => {
    // Synchronously: the next call, whenever it arrives, starts in the new episode.
    s.lastUsedMs = Date.now();
    const journal = s.reset(script);
    if (journal.running.size > 0) {
      const status = closedStatus(s.name, why);
      for (const call of journal.running) call.close(status);
    }
    const closed = s.closing.then(async () => {
      await journal.settled();
      const calls = journal.recorded();
      if (calls.length > 0) await options.onEpisodeClosed?.(decodeEpisode(s.name, calls), why);
      return calls.length;
    });
    // A failed close fails its own reset only; the next close of the session still runs.
    s.closing = closed.then(ignore, ignore);
    return closed;
  };

  /** Sessions deleted or evicted whose last episode is still closing, by name. */
  const retired = new Map<string, Promise<unknown>>();

  /** Closes a session's episode and forgets the session, in one synchronous step. */
  const retire = (s: Session, why: "delete" | "evict"): Promise<number> => {
    const closed = closeEpisode(s, why);
    sessions.delete(s.name);
    const tail = s.closing;
    retired.set(s.name, tail);
    void tail.then(() => {
      if (retired.get(s.name) === tail) retired.delete(s.name);
    });
    return closed;
  };

  return {
    clock,
    script: options.script,
    async call(input) {
      // Malformed names first, for every transport: before the session opens, so a refused call
      // leaves no trace, not even a session; a bad session name is reported before a bad step.
      const bad = checkStepIds(input.request.stepId, input.stepFromMetadata ?? "", input.stepCarrier ?? "metadata");
      if (bad) return { kind: "status", status: checkSessionName(input.session) ?? bad };
      if (draining) return { kind: "status", status: drainingStatus };
      const s = open(input.session);
      if (!(s instanceof Session)) return { kind: "status", status: s };
      const journal = s.episode;
      if (journal.sequence >= maxEpisodeCalls) {
        return { kind: "status", status: limitStatus(`session ${JSON.stringify(s.name)} has recorded ${maxEpisodeCalls} ${maxEpisodeCalls === 1 ? "call" : "calls"} (--max-episode-calls); reset it with ControlService.ResetSession`) };
      }
      if (journal.bytes >= maxEpisodeBytes) {
        return {
          kind: "status",
          status: limitStatus(`the episode of session ${JSON.stringify(s.name)} has recorded ${journal.bytes} bytes, at its limit of ${maxEpisodeBytes} (--max-episode-bytes); reset it with ControlService.ResetSession`),
        };
      }
      inFlight++;
      s.lastUsedMs = Date.now();
      try {
        return await runCall(s, clock, input, options.onCall);
      } finally {
        inFlight--;
        s.lastUsedMs = Date.now();
      }
    },
    async loadScript(name, script) {
      const s = open(name);
      if (!(s instanceof Session)) throw Object.assign(new Error(s.message), { status: s });
      await closeEpisode(s, "reload", script);
    },
    async reset(name) {
      const s = sessions.get(name);
      return s ? closeEpisode(s, "reset") : 0;
    },
    async deleteSession(name) {
      const s = sessions.get(name);
      if (!s) {
        const message = `no session ${JSON.stringify(name)}: the server keeps no session of that name (never used, or already deleted or evicted); ListSessions lists the sessions it keeps`;
        throw Object.assign(new Error(message), { status: { code: Code.NOT_FOUND, message, trailers: [] } satisfies CallStatus });
      }
      return retire(s, "delete");
    },
    evictIdle(idleMs) {
      const now = Date.now();
      const evicted: EvictedSession[] = [];
      for (const s of [...sessions.values()]) {
        if (s.episode.running.size > 0 || now - s.lastUsedMs < idleMs) continue;
        evicted.push({ name: s.name, idleMs: now - s.lastUsedMs, closed: retire(s, "evict") });
      }
      return evicted;
    },
    episode: (name) => episodeOf(name, sessions.get(name)),
    episodeBytes: (name) => encodeEpisode(name, sessions.get(name)?.episode.recorded() ?? []),
    verify: (name) => verifySession(sessions.get(name), options.script),
    sessions: () =>
      [...sessions.values()]
        .map((s) => ({ name: s.name, calls: s.episode.recorded().length, running: s.episode.running.size, scriptName: s.script.name }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    episodes: () => [...sessions.values()].map((s) => episodeOf(s.name, s)),
    closing: async () => {
      await Promise.all([...sessions.values()].map((s) => s.closing).concat([...retired.values()]));
    },
    scriptOf: (name) => sessions.get(name)?.script ?? options.script,
    inFlight: () => inFlight,
    drain() {
      draining = true;
    },
  };
}
