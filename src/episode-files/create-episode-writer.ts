import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { prepareEpisodeWrite, writeEpisodeFile } from "./write-episode-file.js";

/** Writes episodes into a directory, one queue per session. */
export interface EpisodeWriter {
  /**
   * Queues `episode` behind the session's earlier writes; resolves with the .binpb path once
   * it is on disk, rejects when it cannot be written (later writes still run).
   */
  write(episode: Episode): Promise<string>;
  /**
   * Readies the session's next write ahead of time (prepareEpisodeWrite), queued like a write;
   * a failure is left for the write to report.
   */
  prepare(session: string): void;
  /** Resolves once every write queued so far has finished, written or failed. */
  settled(): Promise<void>;
}

/**
 * How many episodes are written at once, across sessions. A shutdown hands over every session's
 * episode together: started all at once, a thousand writes share the disk and the thread pool
 * and all finish near the end, so a SIGKILL before then finds none written; taken a few at a
 * time, they finish one after another, and a kill finds all but the last few written.
 */
export const maxWritesAtOnce = 8;

/**
 * An EpisodeWriter over `dir`. Writes of one session run one after another in the order they
 * were queued, so the file always ends up holding the episode queued last, whatever the size
 * of each; writes of different sessions run side by side.
 */
export function createEpisodeWriter(dir: string, maxWrites = maxWritesAtOnce): EpisodeWriter {
  const tails = new Map<string, Promise<unknown>>();
  /** Sessions whose next write was readied: the folder it goes into. */
  const prepared = new Map<string, string>();
  let writing = 0;
  const waiting: (() => void)[] = [];
  /** Runs `write` once fewer than `maxWrites` writes run; the others wait their turn, in order. */
  const inTurn = async <T>(write: () => Promise<T>): Promise<T> => {
    if (writing >= maxWrites) await new Promise<void>((resolve) => waiting.push(resolve));
    writing++;
    try {
      return await write();
    } finally {
      writing--;
      waiting.shift()?.();
    }
  };
  /** Runs `job` after the session's earlier jobs, in its turn; the queue goes on whatever it does. */
  const queue = <T>(session: string, job: () => Promise<T>): Promise<T> => {
    const done = (tails.get(session) ?? Promise.resolve()).then(() => inTurn(job));
    const tail = done.then(
      () => undefined,
      () => undefined,
    );
    tails.set(session, tail);
    // Forget a finished queue, unless a later job has queued behind it meanwhile.
    void tail.then(() => {
      if (tails.get(session) === tail) tails.delete(session);
    });
    return done;
  };
  return {
    write: (episode) =>
      queue(episode.session, () => {
        const folder = prepared.get(episode.session);
        prepared.delete(episode.session);
        return writeEpisodeFile(dir, episode, folder);
      }),
    prepare(session) {
      void queue(session, async () => {
        if (!prepared.has(session)) prepared.set(session, await prepareEpisodeWrite(dir, session));
      }).catch(() => undefined);
    },
    async settled() {
      await Promise.all(tails.values());
    },
  };
}
