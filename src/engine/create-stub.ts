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
  /** Told about every finished call (logs). */
  onCall?: (log: CallLog) => void;
  /** Told when a session's episode closes by reset or reload (recording to disk). */
  onEpisodeClosed?: (episode: Episode) => void;
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
  /** Replaces a session's script and starts it afresh (the closed episode goes to onEpisodeClosed). */
  loadScript(session: string, script: CompiledScript): void;
  /** Rewinds a session and starts a new episode; returns how many calls the closed one had. */
  reset(session: string): number;
  episode(session: string): Episode;
  /** The episode's deterministic bytes. */
  episodeBytes(session: string): Uint8Array;
  verify(session: string): Verification;
  sessions(): { name: string; calls: number; scriptName: string }[];
  /** Every session's episode, for recording at shutdown. */
  episodes(): Episode[];
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
  return decodeEpisode(name, session ? session.recordedCalls() : []);
}

/** Creates a stub serving `options.script`. */
export function createStub(options: StubOptions): Stub {
  const clock = options.clock ?? createRealClock();
  const maxSessions = options.maxSessions ?? 1000;
  const maxEpisodeCalls = options.maxEpisodeCalls ?? 100_000;
  const sessions = new Map<string, Session>();
  let inFlight = 0;
  let draining = false;

  const open = (name: string): Session | CallStatus => {
    let s = sessions.get(name);
    if (s) return s;
    const bad = checkSessionName(name);
    if (bad) return bad;
    if (sessions.size >= maxSessions) {
      return {
        code: Code.RESOURCE_EXHAUSTED,
        message: `session limit reached: the server keeps at most ${maxSessions} sessions (--max-sessions); reuse session names or raise the limit`,
        trailers: [],
      };
    }
    s = new Session(name, options.script);
    sessions.set(name, s);
    return s;
  };

  const closeEpisode = (s: Session, script?: CompiledScript): number => {
    const calls = s.reset(script);
    if (calls.length > 0) options.onEpisodeClosed?.(decodeEpisode(s.name, calls));
    return calls.length;
  };

  return {
    clock,
    script: options.script,
    async call(input) {
      if (draining) return { kind: "status", status: drainingStatus };
      const s = open(input.session);
      if (!(s instanceof Session)) return { kind: "status", status: s };
      if (s.sequence >= maxEpisodeCalls) {
        return {
          kind: "status",
          status: {
            code: Code.RESOURCE_EXHAUSTED,
            message: `session ${JSON.stringify(s.name)} has recorded ${maxEpisodeCalls} calls (--max-episode-calls); reset it with ControlService.ResetSession`,
            trailers: [],
          },
        };
      }
      inFlight++;
      try {
        return await runCall(s, clock, input, options.onCall);
      } finally {
        inFlight--;
      }
    },
    loadScript(name, script) {
      const s = open(name);
      if (!(s instanceof Session)) throw Object.assign(new Error(s.message), { status: s });
      closeEpisode(s, script);
    },
    reset(name) {
      const s = sessions.get(name);
      return s ? closeEpisode(s) : 0;
    },
    episode: (name) => episodeOf(name, sessions.get(name)),
    episodeBytes: (name) => encodeEpisode(name, sessions.get(name)?.recordedCalls() ?? []),
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
        .map((s) => ({ name: s.name, calls: s.recordedCalls().length, scriptName: s.script.name }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    episodes: () => [...sessions.values()].map((s) => episodeOf(s.name, s)),
    scriptOf: (name) => sessions.get(name)?.script ?? options.script,
    inFlight: () => inFlight,
    drain() {
      draining = true;
    },
  };
}
