import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import type { EpisodeCloseReason } from "../engine/episode-close-reason.js";
import { Code } from "../shared/status-code.js";
import { createEpisodeWriter } from "./create-episode-writer.js";
import { StatusError } from "../shared/status-error.js";

/** Where the recorder reports: the server's logger fits. */
export interface RecordLog {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Records closed episodes into the record directory (or nowhere, without one). */
export interface Recorder {
  /**
   * Writes `episode`, queued behind the session's earlier writes; resolves once it is on disk.
   * A write that fails is logged and counted, and rejects with the status a control call answers.
   */
  record(episode: Episode, why?: EpisodeCloseReason | "shutdown"): Promise<void>;
  /**
   * Readies the files of sessions whose episodes a shutdown is about to write, while their calls
   * finish: what is left to do once they have is one link per episode.
   */
  prepare(sessions: string[]): void;
  /** Resolves once every write queued so far has finished, written or failed. */
  settled(): Promise<void>;
  /** Writes that failed so far: at shutdown, any makes the exit code non-zero (episodes were lost). */
  failures(): number;
}

/** What became of a session whose closed episode could not be written, for the error message. */
const afterwards: Record<EpisodeCloseReason | "shutdown", string> = {
  reset: "the session has a new episode all the same",
  reload: "the session has its new script and a new episode all the same",
  faults: "the session has its new fault plan and a new episode all the same",
  delete: "the session is deleted all the same",
  evict: "the session is evicted all the same",
  shutdown: "the server is shutting down",
};

/**
 * A Recorder over `dir`, one write queue per session (the latest episode wins). Without a `dir`
 * it records nothing and never fails.
 */
export function createRecorder(dir: string | undefined, log: RecordLog): Recorder {
  const writer = dir ? createEpisodeWriter(dir) : undefined;
  let failures = 0;
  return {
    async record(episode, why = "reset") {
      if (!writer) return;
      try {
        const path = await writer.write(episode);
        log.info("episode recorded", { session: episode.session, calls: episode.calls.length, path });
      } catch (err) {
        failures++;
        const error = (err as Error).message;
        log.error("cannot record episode", { session: episode.session, calls: episode.calls.length, error, failed_writes: failures });
        const message = `the closed episode of session ${JSON.stringify(episode.session)} could not be written to --record-dir: ${error} (${afterwards[why]})`;
        throw new StatusError({ code: Code.INTERNAL, message, trailers: [] });
      }
    },
    prepare(sessions) {
      for (const s of sessions) writer?.prepare(s);
    },
    settled: () => writer?.settled() ?? Promise.resolve(),
    failures: () => failures,
  };
}
