import { mkdir, open, readdir, readlink, rm, stat, symlink, unlink } from "node:fs/promises";
import { join } from "node:path";
import { storeDirName, storeEntryPattern, tempFilePattern } from "./write-episode-file.js";

/** A record directory that cannot be used: the server refuses to start with this message. */
export class RecordDirError extends Error {}

/** What prepareRecordDir() found. */
export interface PreparedRecordDir {
  /** Temp files of writes that never finished (their process is gone), removed. */
  removed: number;
  /** Temp files of a process still running (another server sharing the directory), left alone. */
  kept: number;
}

/** Whether process `pid` runs (EPERM: it does, as another user). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function reason(err: unknown): string {
  return (err as Error).message;
}

/**
 * Makes sure episodes can be written into `dir` before the server takes a call: creates it when
 * missing, checks it is a directory and that a file can be written in it (a real write, not the
 * mode bits, which do not bind root or tell a read-only mount), and removes what writes cut short
 * by a kill left behind (temp files; the store's folders and links no episode uses). Throws a
 * RecordDirError naming the directory and what is wrong, so the server can refuse to start instead of losing every episode at shutdown.
 *
 * A temp file is removed only when it matches the writer's own name pattern and the process that
 * wrote it no longer runs (or is this one, which has not written yet): a second server writing
 * into the same directory keeps its writes in flight.
 */
export async function prepareRecordDir(dir: string): Promise<PreparedRecordDir> {
  const refuse = (what: string) => new RecordDirError(`--record-dir ${dir}: ${what}; give a directory modelstub can write in`);
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    // mkdir says EEXIST for a file of that name: say what is there instead.
    const there = await stat(dir).catch(() => undefined);
    throw refuse(there && !there.isDirectory() ? "it is a file, not a directory" : `cannot create it (${reason(err)})`);
  }
  const info = await stat(dir).catch((err: unknown) => {
    throw refuse(`cannot read it (${reason(err)})`);
  });
  if (!info.isDirectory()) throw refuse("it is a file, not a directory");
  const probe = join(dir, `.modelstub-write-check-${process.pid}`);
  try {
    const file = await open(probe, "w");
    try {
      await file.writeFile("modelstub checks that it can write here\n");
      await file.sync();
    } finally {
      await file.close();
    }
    await unlink(probe);
  } catch (err) {
    await unlink(probe).catch(() => undefined);
    throw refuse(`cannot write in it (${reason(err)})`);
  }
  // An episode's two files change together through a symbolic link (write-episode-file.ts).
  try {
    await symlink(`.modelstub-link-check-${process.pid}`, probe);
    await unlink(probe);
  } catch (err) {
    await unlink(probe).catch(() => undefined);
    throw refuse(`cannot make a symbolic link in it (${reason(err)}), which keeps each episode's .binpb and .json one pair`);
  }
  let removed = 0;
  let kept = 0;
  const ours = (pid: number) => pid === process.pid || !processRuns(pid);
  for (const name of await readdir(dir)) {
    const m = tempFilePattern.exec(name);
    if (!m) continue;
    if (!ours(Number(m[1]))) {
      kept++;
      continue;
    }
    try {
      await unlink(join(dir, name));
      removed++;
    } catch {
      // Gone meanwhile, or not ours to remove: it does no harm where it is.
    }
  }
  // The store (write-episode-file.ts): a folder no session's link names, or a link never renamed,
  // is what a write cut short left; the folder a link names is an episode, kept.
  const store = join(dir, storeDirName);
  for (const name of await readdir(store).catch(() => [] as string[])) {
    const m = storeEntryPattern.exec(name);
    if (!m) continue;
    if (!ours(Number(m[2]))) {
      kept++;
      continue;
    }
    if (!m[3] && (await readlink(join(store, m[1]!)).catch(() => undefined)) === name) continue;
    try {
      await rm(join(store, name), { recursive: true, force: true });
      removed++;
    } catch {
      // As above.
    }
  }
  return { removed, kept };
}
