import { randomBytes } from "node:crypto";
import { link, lstat, mkdir, open, readlink, realpath, rename, rmdir, symlink, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { writeBinpb, writeJson } from "./write-episode-pieces.js";

/*
 * The layout of a record directory (docs/episodes.md, "On disk"). An episode is its two files,
 * `.binpb` and `.json`, and the pair changes in one step: both are written into a folder of
 * their own, and one symbolic link, renamed over the previous one, makes that folder the
 * session's. The names users read are links through it:
 *
 *   DIR/alice.episode.binpb -> .episodes/alice/alice.episode.binpb
 *   DIR/alice.episode.json  -> .episodes/alice/alice.episode.json
 *   DIR/.episodes/alice     -> alice@<pid>-<random>         (the one link a write renames)
 *   DIR/.episodes/alice@<pid>-<random>/alice.episode.binpb and .json
 *
 * A kill at any instant leaves the previous pair or the new one, never one file of each; what a
 * write leaves behind when killed (a folder no link names, a link not yet renamed) is removed at
 * the next start (prepareRecordDir). Readers open the usual names and follow the links.
 */

/** The folder, inside the record directory, that holds the episodes' folders and links. */
export const storeDirName = ".episodes";

/**
 * The names a write makes in the store before its rename: an episode's folder
 * `<session>@<pid>-<hex>`, and its link `<session>@<pid>-<hex>.link` before it is renamed to
 * `<session>`. `@` is not a session-name character, so no session's link can take one of these
 * names. Group 1: the session; group 2: the pid of the process that made it; group 3: `.link`.
 */
export const storeEntryPattern = /^([A-Za-z0-9._-]{1,128})@(\d+)-[0-9a-f]+(\.link)?$/;

/**
 * Temp files of the layout before this one (`<session>.episode.<binpb|json>.tmp-<pid>-<n>`,
 * written beside the target and renamed): prepareRecordDir() still removes those a kill left.
 * Group 1: the pid of the process that wrote it.
 */
export const tempFilePattern = /^[A-Za-z0-9._-]{1,128}\.episode\.(?:binpb|json)\.tmp-(\d+)-\d+$/;

const extensions = ["binpb", "json"] as const;

/** A name no other write, of this process or another sharing the directory, makes. */
function uniqueSuffix(): string {
  return `${process.pid}-${randomBytes(6).toString("hex")}`;
}

async function writeFlushed(path: string, write: (file: FileHandle) => Promise<void>): Promise<void> {
  const file = await open(path, "wx");
  try {
    await write(file);
    // Flushed before the link names it: after a crash of the machine, the link never points at
    // an unwritten file.
    await file.sync();
  } finally {
    await file.close();
  }
}

/** What `path` is: a link (and to what), another file, or nothing. */
async function entryAt(path: string): Promise<{ kind: "link"; target: string } | { kind: "file" } | { kind: "none" }> {
  const info = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!info) return { kind: "none" };
  if (info.isSymbolicLink()) return { kind: "link", target: await readlink(path) };
  return { kind: "file" };
}

/**
 * Makes `path` a link to `target`: made in place when nothing is there (one call, the usual case
 * for a session's first episode), else renamed over what is there, in one step either way.
 */
async function placeLink(store: string, session: string, path: string, target: string): Promise<void> {
  if (await makeLink(target, path)) return;
  await replaceLink(store, session, path, target);
}

/** Makes `path` a link to `target` when nothing is there; false when something is. */
function makeLink(target: string, path: string): Promise<boolean> {
  return symlink(target, path).then(
    () => true,
    (err: NodeJS.ErrnoException) => (err.code === "EEXIST" ? false : Promise.reject(err)),
  );
}

/** Renames a new link to `target` over what is at `path`. */
async function replaceLink(store: string, session: string, path: string, target: string): Promise<void> {
  const tmp = join(store, `${session}@${uniqueSuffix()}.link`);
  await symlink(target, tmp);
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/**
 * Makes the user-facing names links through the session's store link, once per session and
 * directory. Each step leaves the pair whole: names made before the session has a folder
 * dangle together (no episode yet); the two files of an earlier layout are first taken into a
 * folder of their own (hard links, same bytes) that the store link names, so swapping each for
 * a link shows the same bytes.
 */
async function linkNames(dir: string, store: string, session: string): Promise<void> {
  const names = extensions.map((ext) => ({
    ext,
    path: join(dir, `${session}.episode.${ext}`),
    target: `${storeDirName}/${session}/${session}.episode.${ext}`,
  }));
  // Looked at first (cheap calls), made only when missing: a symbolic link is one of the slower
  // calls on a busy disk, and a session's names are made once.
  const found = await Promise.all(names.map((n) => entryAt(n.path)));
  if (found.every((f, i) => f.kind === "link" && f.target === names[i]!.target)) return;
  if (found.some((f) => f.kind === "file")) {
    const adopted = `${session}@${uniqueSuffix()}`;
    await mkdir(join(store, adopted));
    // Same bytes under the new folder: a plain file as it is, a name that is already a link as
    // the file it leads to (link() would link the link itself).
    await Promise.all(
      names.map(async (n, i) => {
        const from = found[i]!.kind === "file" ? n.path : await realpath(n.path).catch(() => undefined);
        if (from) await link(from, join(store, adopted, `${session}.episode.${n.ext}`));
      }),
    );
    await placeLink(store, session, join(store, session), adopted);
  }
  await Promise.all(
    names.map((n, i) =>
      found[i]!.kind === "link" && (found[i] as { target: string }).target === n.target ? undefined : placeLink(store, session, n.path, n.target),
    ),
  );
}

/**
 * Readies the next write of `session` into `dir` ahead of time: the names `<session>.episode.binpb`
 * and `.json` made links (dangling together until the first pair is written: no episode), the
 * folder the pair will go into, and the link naming it, not yet renamed. A shutdown does this
 * for every session while calls finish, so that what is left after the grace is writing two
 * files and one rename per episode (a symbolic link is one of the slower calls on a busy disk).
 * Resolves with the folder's name, for writeEpisodeFile.
 */
export async function prepareEpisodeWrite(dir: string, session: string): Promise<string> {
  const store = join(dir, storeDirName);
  await mkdir(store, { recursive: true });
  await linkNames(dir, store, session);
  const folder = `${session}@${uniqueSuffix()}`;
  await mkdir(join(store, folder));
  await symlink(folder, join(store, `${folder}.link`));
  return folder;
}

/** Removes an episode's folder that no link names any more (its two files, then itself). */
async function removeFolder(folder: string, session: string): Promise<void> {
  await Promise.all(extensions.map((ext) => unlink(join(folder, `${session}.episode.${ext}`)).catch(() => undefined)));
  await rmdir(folder).catch(() => undefined);
}

/**
 * Writes `<session>.episode.binpb` (the deterministic bytes) and `<session>.episode.json`
 * (readable) into `dir` as one pair (see the layout above): a reader, or a crash at any instant,
 * finds both from the same episode. Session names are restricted to file-safe characters, so
 * the name is used as it is. Two calls for one session may finish in either order:
 * createEpisodeWriter queues them. `prepared`: the folder prepareEpisodeWrite made for this
 * write. Resolves with the `.binpb` path.
 */
export async function writeEpisodeFile(dir: string, episode: Episode, prepared?: string): Promise<string> {
  const session = episode.session;
  const store = join(dir, storeDirName);
  const folder = prepared ?? `${session}@${uniqueSuffix()}`;
  // The store is made by the first write (and again should someone remove it): one call less
  // per episode, which counts when a shutdown writes a thousand.
  if (!prepared) {
    await mkdir(join(store, folder)).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
      await mkdir(store, { recursive: true });
      await mkdir(join(store, folder));
    });
  }
  try {
    await Promise.all([
      writeFlushed(join(store, folder, `${session}.episode.binpb`), (file) => writeBinpb(file, episode)),
      writeFlushed(join(store, folder, `${session}.episode.json`), (file) => writeJson(file, episode)),
    ]);
    await linkNames(dir, store, session);
  } catch (err) {
    await removeFolder(join(store, folder), session);
    if (prepared) await unlink(join(store, `${folder}.link`)).catch(() => undefined);
    throw err;
  }
  // The one step that changes the episode on disk: both files at once.
  const current = join(store, session);
  let previous: string | undefined;
  if (prepared) {
    previous = await readlink(current).catch(() => undefined);
    await rename(join(store, `${folder}.link`), current);
  } else if (!(await makeLink(folder, current))) {
    previous = await readlink(current).catch(() => undefined);
    await replaceLink(store, session, current, folder);
  }
  if (previous && previous !== folder && storeEntryPattern.test(previous)) await removeFolder(join(store, previous), session);
  return join(dir, `${session}.episode.binpb`);
}
