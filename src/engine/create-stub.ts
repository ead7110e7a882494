import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { createRealClock, type Clock } from "./clock.js";
import type { CallStatus, CompiledScript } from "./compile-script.js";
import { decodeEpisode, encodeEpisode } from "./encode-episode.js";
import { runCall, type CallInput, type CallLog, type CallResult } from "./run-call.js";
import { Session } from "./session.js";
import { Code } from "./status-code.js";

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
   * Told when a session's episode closes by reset or reload (recording to disk), once its cut-off
   * calls are recorded, in the order the session's episodes closed. A returned promise is
   * awaited: the reset or reload completes after it (so ResetSession answers once the file is
   * written), and its rejection becomes the reset's.
   */
  onEpisodeClosed?: (episode: Episode) => void | Promise<void>;
}

/** A verify report: the limited entries a session has not used up yet. */
export interface Verification {
  satisfied: boolean;
  unused: { entry: string; remaining: number; summary: string }[];
  message: string;
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
  episode(session: string): Episode;
  /** The episode's deterministic bytes. */
  episodeBytes(session: string): Uint8Array;
  verify(session: string): Verification;
  sessions(): { name: string; calls: number; scriptName: string }[];
  /** Every session's episode, for recording at shutdown. */
  episodes(): Episode[];
  /** Resolves once every episode being closed by a reset or reload has gone to onEpisodeClosed. */
  closing(): Promise<void>;
  /** The script a session is served from (the stub's script for a session not yet seen). */
  scriptOf(session: string): CompiledScript;
  /** Calls running right now, across sessions (for drain and leak checks). */
  inFlight(): number;
  /** Starts draining: calls from now on answer UNAVAILABLE; calls in flight go on. */
  drain(): void;
}

const drainingStatus: CallStatus = { code: Code.UNAVAILABLE, message: "modelstub is shutting down: it takes no new calls", trailers: [] };

const sessionNamePattern = /^[A-Za-z0-9._-]{1,128}$/;

/** Checks a session name: it is used in file names and ids, so it stays plain. */
export function checkSessionName(name: string): CallStatus | undefined {
  if (sessionNamePattern.test(name)) return undefined;
  return {
    code: Code.INVALID_ARGUMENT,
    message: `invalid session name ${JSON.stringify(name.slice(0, 140))}: use 1 to 128 of A-Z a-z 0-9 . _ -`,
    trailers: [],
  };
}

function episodeOf(name: string, session: Session | undefined): Episode {
  return decodeEpisode(name, session ? session.episode.recorded() : []);
}

/** The status of a call cut off because its episode closed, as the client sees it. */
function closedStatus(session: string, why: "reset" | "reload"): CallStatus {
  const what = why === "reset" ? `session ${JSON.stringify(session)} was reset` : `a new script was loaded into session ${JSON.stringify(session)}`;
  return { code: Code.CANCELLED, message: `${what} while this call was running`, trailers: [] };
}

const ignore = () => undefined;

/** A limit of the stub itself: retrying cannot lift it, a reset (or a restart) does. */
function limitStatus(message: string): CallStatus {
  return { code: Code.RESOURCE_EXHAUSTED, message, trailers: [], retryable: false };
}

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
      return limitStatus(`session limit reached: the server keeps at most ${maxSessions} sessions (--max-sessions); reuse session names or raise the limit`);
    }
    s = new Session(name, options.script);
    sessions.set(name, s);
    return s;
  };

  const closeEpisode = (s: Session, why: "reset" | "reload", script?: CompiledScript): Promise<number> => {
    // Synchronously: the next call, whenever it arrives, starts in the new episode.
    const journal = s.reset(script);
    if (journal.running.size > 0) {
      const status = closedStatus(s.name, why);
      for (const call of journal.running) call.close(status);
    }
    const closed = s.closing.then(async () => {
      await journal.settled();
      const calls = journal.recorded();
      if (calls.length > 0) await options.onEpisodeClosed?.(decodeEpisode(s.name, calls));
      return calls.length;
    });
    // A failed close fails its own reset only; the next close of the session still runs.
    s.closing = closed.then(ignore, ignore);
    return closed;
  };

  return {
    clock,
    script: options.script,
    async call(input) {
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
      try {
        return await runCall(s, clock, input, options.onCall);
      } finally {
        inFlight--;
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
    episode: (name) => episodeOf(name, sessions.get(name)),
    episodeBytes: (name) => encodeEpisode(name, sessions.get(name)?.episode.recorded() ?? []),
    verify(name) {
      const s = sessions.get(name);
      const unused: Verification["unused"] = [];
      const cursors = s ? s.allCursors() : [...options.script.lists.values()].map((list) => ({ list, used: new Uint32Array(list.entries.length) }));
      for (const { list, used } of cursors) {
        list.entries.forEach((e, i) => {
          if (e.limited && used[i]! < e.limit) unused.push({ entry: e.ref, remaining: e.limit - used[i]!, summary: e.summary });
        });
      }
      const message =
        unused.length === 0
          ? "every scripted entry was used"
          : `${unused.length} scripted entr${unused.length === 1 ? "y was" : "ies were"} not used up: ${unused.map((u) => `${u.summary} (${u.remaining} left)`).join("; ")}`;
      return { satisfied: unused.length === 0, unused, message };
    },
    sessions: () =>
      [...sessions.values()]
        .map((s) => ({ name: s.name, calls: s.episode.recorded().length, scriptName: s.script.name }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    episodes: () => [...sessions.values()].map((s) => episodeOf(s.name, s)),
    closing: async () => {
      await Promise.all([...sessions.values()].map((s) => s.closing));
    },
    scriptOf: (name) => sessions.get(name)?.script ?? options.script,
    inFlight: () => inFlight,
    drain() {
      draining = true;
    },
  };
}
