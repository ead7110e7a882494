import { toBinary, toJsonString } from "@bufbuild/protobuf";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";

/** Numbers temp files within this process: two writes in flight never share a temp file. */
let tempCounter = 0;

/**
 * The names of this writer's temp files, `<session>.episode.<binpb|json>.tmp-<pid>-<n>`; group 1
 * is the pid of the process that wrote it. One killed mid-write leaves its temp file behind:
 * prepareRecordDir() removes those at start, and only those.
 */
export const tempFilePattern = /^[A-Za-z0-9._-]{1,128}\.episode\.(?:binpb|json)\.tmp-(\d+)-\d+$/;

async function writeAtomically(path: string, data: Uint8Array | string): Promise<void> {
  // Write beside the target, then rename: a reader sees the old file or the new one, never a
  // torn one. The name is unique per write (pid and a counter), so two writes of one path in
  // flight cannot write into each other's temp file.
  const tmp = `${path}.tmp-${process.pid}-${++tempCounter}`;
  try {
    const file = await open(tmp, "w");
    try {
      await file.writeFile(data);
      // Flushed before the rename: after a crash the name never points at an unwritten file.
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/**
 * Writes `<session>.episode.binpb` (the deterministic bytes) and `<session>.episode.json`
 * (readable) into `dir`, each atomically. Session names are restricted to file-safe
 * characters, so the name is used as it is. Two calls for one session may finish in either
 * order: createEpisodeWriter queues them.
 */
export async function writeEpisodeFile(dir: string, episode: Episode): Promise<string> {
  await mkdir(dir, { recursive: true });
  const base = join(dir, `${episode.session}.episode`);
  await writeAtomically(`${base}.binpb`, toBinary(EpisodeSchema, episode));
  await writeAtomically(`${base}.json`, `${toJsonString(EpisodeSchema, episode, { prettySpaces: 2, useProtoFieldName: true })}\n`);
  return `${base}.binpb`;
}
