import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { writeEpisodeFile } from "./write-episode-file.js";

/** Writes episodes into a directory, one queue per session. */
export interface EpisodeWriter {
  /**
   * Queues `episode` behind the session's earlier writes; resolves with the .binpb path once
   * it is on disk, rejects when it cannot be written (later writes still run).
   */
  write(episode: Episode): Promise<string>;
  /** Resolves once every write queued so far has finished, written or failed. */
  settled(): Promise<void>;
}

/**
 * An EpisodeWriter over `dir`. Writes of one session run one after another in the order they
 * were queued, so the file always ends up holding the episode queued last, whatever the size
 * of each; writes of different sessions run side by side.
 */
export function createEpisodeWriter(dir: string): EpisodeWriter {
  const tails = new Map<string, Promise<unknown>>();
  return {
    write(episode) {
      const session = episode.session;
      const written = (tails.get(session) ?? Promise.resolve()).then(() => writeEpisodeFile(dir, episode));
      const tail = written.then(
        () => undefined,
        () => undefined,
      );
      tails.set(session, tail);
      // Forget a finished queue, unless a later write has queued behind it meanwhile.
      void tail.then(() => {
        if (tails.get(session) === tail) tails.delete(session);
      });
      return written;
    },
    async settled() {
      await Promise.all(tails.values());
    },
  };
}
