import { toBinary, toJsonString } from "@bufbuild/protobuf";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";

async function writeAtomically(path: string, data: Uint8Array | string): Promise<void> {
  // Write beside the target, then rename: a reader sees the old file or the new one, never a torn one.
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/**
 * Writes `<session>.episode.binpb` (the deterministic bytes) and `<session>.episode.json`
 * (readable) into `dir`, each atomically. Session names are restricted to file-safe
 * characters, so the name is used as it is.
 */
export async function writeEpisodeFile(dir: string, episode: Episode): Promise<string> {
  await mkdir(dir, { recursive: true });
  const base = join(dir, `${episode.session}.episode`);
  await writeAtomically(`${base}.binpb`, toBinary(EpisodeSchema, episode));
  await writeAtomically(`${base}.json`, `${toJsonString(EpisodeSchema, episode, { prettySpaces: 2, useProtoFieldName: true })}\n`);
  return `${base}.binpb`;
}
