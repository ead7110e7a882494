import { fromBinary } from "@bufbuild/protobuf";
import { EpisodeCallSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { createRealClock } from "./clock.js";
import { checkStepIds } from "./check-step-id.js";
import type { CallStatus } from "../script/compiled-script.js";
import { decodeEpisode, decodeEpisodeInSlices, encodeEpisode } from "./encode-episode.js";
import { episodePieces } from "./episode-pieces.js";
import { checkSessionName } from "./check-session-name.js";
import { StatusError } from "../shared/status-error.js";
import { limitStatus } from "./limit-status.js";
import { closedStatus, type EpisodeCloseReason } from "./episode-close-reason.js";
import { runCall } from "./run-call.js";
import { runEmbed } from "./run-embed.js";
import { defaultEmbedDimensions, embedLimitProblem } from "../shared/embed-limits.js";
import { Session } from "./session.js";
import { CallWatchers } from "./call-event.js";
import { verifySession } from "./verify-session.js";
import { Code } from "../shared/status-code.js";
import { defaultInstanceId, episodeIdMinter, instanceIdProblem } from "./instance-id.js";

export type { EvictedSession, Stub, StubOptions } from "./stub.js";
import type { EvictedSession, Stub, StubOptions } from "./stub.js";

const drainingStatus: CallStatus = { code: Code.UNAVAILABLE, message: "modelstub is shutting down: it takes no new calls", trailers: [] };

function episodeOf(name: string, session: Session | undefined): Episode {
  return session ? decodeEpisode(name, session.episode.recorded(), session.episode.planIdentity()) : decodeEpisode(name, []);
}

const ignore = () => undefined;

/** Creates a stub serving `options.script`. */
export function createStub(options: StubOptions): Stub {
  const clock = options.clock ?? createRealClock();
  const maxSessions = options.maxSessions ?? 1000;
  const maxEpisodeCalls = options.maxEpisodeCalls ?? 100_000;
  const maxEpisodeBytes = options.maxEpisodeBytes ?? 64 * 1024 * 1024;
  const instance = options.instance ?? defaultInstanceId();
  const badInstance = instanceIdProblem(instance);
  if (badInstance) throw new Error(badInstance);
  const episodeId = episodeIdMinter(instance);
  const sessions = new Map<string, Session>();
  let inFlight = 0;
  const watchers = new CallWatchers();
  let draining = false;

  /** The session of a name, opened when it is new; or why it cannot be. */
  const open = (name: string): Session | CallStatus => sessions.get(name) ?? checkSessionName(name) ?? openNew(name);

  /** Opens a session of a name already checked, unless the server keeps as many as it may. */
  const openNew = (name: string): Session | CallStatus => {
    if (sessions.size >= maxSessions) {
      return limitStatus(
        `session limit reached: the server keeps at most ${maxSessions} sessions (--max-sessions); free slots with ControlService.DeleteSession, let idle sessions go with --session-idle-timeout, reuse session names, or raise --max-sessions`,
      );
    }
    const s = new Session(name, options.script, episodeId);
    // A session deleted under this name may still be writing its last episode: this one's
    // episodes close behind it, so the name's files end with the latest episode.
    s.closing = retired.get(name) ?? s.closing;
    sessions.set(name, s);
    return s;
  };

  const closeEpisode = (s: Session, why: EpisodeCloseReason, script = s.script, plan = script.faults): Promise<number> => {
    // Synchronously: the next call, whenever it arrives, starts in the new episode.
    s.lastUsedMs = Date.now();
    const journal = s.reset(script, plan);
    if (journal.running.size > 0) {
      const status = closedStatus(s.name, why);
      for (const call of journal.running) call.close(status);
    }
    const closed = s.closing.then(async () => {
      await journal.settled();
      const calls = journal.recorded();
      // Decoded in slices: a 64 MiB episode decoded at once held the loop for every session.
      if (calls.length > 0 && options.onEpisodeClosed) await options.onEpisodeClosed(await decodeEpisodeInSlices(s.name, calls, journal.planIdentity()), why);
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

  /** The session a call with a well-formed session name runs in, opened when new; or why it runs in none (draining, a cap). */
  const admit = (name: string): Session | CallStatus => {
    if (draining) return drainingStatus;
    const s = sessions.get(name) ?? openNew(name);
    if (!(s instanceof Session)) return s;
    const journal = s.episode;
    if (journal.sequence >= maxEpisodeCalls) {
      return limitStatus(
        `session ${JSON.stringify(s.name)} has recorded ${maxEpisodeCalls} ${maxEpisodeCalls === 1 ? "call" : "calls"} (--max-episode-calls); reset it with ControlService.ResetSession`,
      );
    }
    if (journal.bytes >= maxEpisodeBytes) {
      return limitStatus(
        `the episode of session ${JSON.stringify(s.name)} has recorded ${journal.bytes} bytes, at its limit of ${maxEpisodeBytes} (--max-episode-bytes); reset it with ControlService.ResetSession`,
      );
    }
    return s;
  };

  return {
    clock,
    script: options.script,
    instance,
    episodeIdOf: (name) => sessions.get(name)?.episode.id,
    async call(input) {
      // Malformed names first, for every transport, each checked here once: before the session
      // opens, so a refused call leaves no trace, not even a session; a bad session name is
      // reported before a bad step.
      const bad = checkSessionName(input.session) ?? checkStepIds(input.request.stepId, input.stepFromMetadata ?? "", input.stepCarrier ?? "metadata");
      if (bad) return { kind: "status", status: bad };
      const s = admit(input.session);
      if (!(s instanceof Session)) return { kind: "status", status: s };
      inFlight++;
      s.lastUsedMs = Date.now();
      try {
        return await runCall(s, clock, input, options.onCall, watchers.watched(s.name) ? (e) => watchers.emit(s.name, e) : undefined, options.replayMode);
      } finally {
        inFlight--;
        s.lastUsedMs = Date.now();
      }
    },
    embed(input) {
      const dimensions = input.request.dimensions ?? defaultEmbedDimensions;
      const over = embedLimitProblem(input.request.input.length, dimensions);
      const bad = checkSessionName(input.session) ?? (over && { code: Code.INVALID_ARGUMENT, message: over.message, trailers: [] });
      if (bad) return { kind: "status", status: bad };
      const s = admit(input.session);
      if (!(s instanceof Session)) return { kind: "status", status: s };
      s.lastUsedMs = Date.now();
      return runEmbed(s, input);
    },
    async loadScript(name, script) {
      const s = open(name);
      if (!(s instanceof Session)) throw new StatusError(s);
      await closeEpisode(s, "reload", script);
    },
    async setFaultPlan(name, plan) {
      const s = open(name);
      if (!(s instanceof Session)) throw new StatusError(s);
      return closeEpisode(s, "faults", s.script, plan);
    },
    async reset(name) {
      const s = sessions.get(name);
      return s ? closeEpisode(s, "reset") : 0;
    },
    async deleteSession(name) {
      const s = sessions.get(name);
      if (!s) {
        const message = `no session ${JSON.stringify(name)}: the server keeps no session of that name (never used, or already deleted or evicted); ListSessions lists the sessions it keeps`;
        throw new StatusError({ code: Code.NOT_FOUND, message, trailers: [] });
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
    recordedCall: (name, sequence) => {
      // One call decoded, not the episode: a Responses item_reference names a call of thousands.
      const bytes = sessions.get(name)?.episode.recordedAt(sequence);
      return bytes && fromBinary(EpisodeCallSchema, bytes);
    },
    episodeBytes: (name) => {
      const journal = sessions.get(name)?.episode;
      return journal ? encodeEpisode(name, journal.recorded(), journal.planIdentity()) : encodeEpisode(name, []);
    },
    episodePieces: (name) => {
      const journal = sessions.get(name)?.episode;
      return journal ? episodePieces(name, journal.recorded(), journal.planIdentity()) : episodePieces(name, []);
    },
    verify: (name) => verifySession(sessions.get(name), options.script),
    watch: (name, listener) => watchers.add(name, listener),
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
    cutOff(status) {
      let cut = 0;
      for (const s of sessions.values()) {
        for (const call of s.episode.running) {
          call.close(status);
          cut++;
        }
      }
      return cut;
    },
  };
}
