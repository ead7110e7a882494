import { constants } from "node:fs";
import { access, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { maxScriptBytes } from "./script-limits.js";

/**
 * Why a generated script cannot be served (`serve` and `validate` refuse a script past the size
 * limit before parsing it), or undefined: `record` and `script from-episode` report it.
 */
export function oversizeProblem(text: string): string | undefined {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxScriptBytes) return undefined;
  return `the script is ${bytes} bytes, over the ${maxScriptBytes} (${maxScriptBytes / 1024} KiB) a script may hold: serve and validate refuse it`;
}

/** An errno message without the path Node appends (`ENOENT: no such file or directory, open '/x.tmp'`): it would name the temp file. */
const reasonOf = (err: unknown) => (err instanceof Error ? err.message.replace(/, \w+ '.*'$/s, "") : String(err));

/**
 * Writes a script to `path` atomically: a temp file beside it, then a rename, so a reader never
 * sees half a script. A failure names `path`, the file the user asked for, never the temp file.
 */
export async function writeScriptFile(path: string, text: string): Promise<void> {
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(temp, text);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw new Error(`cannot write ${path}: ${reasonOf(err)}`);
  }
}

/**
 * Why a script could not be written to `path` (its folder missing or not writable, or `path` a
 * folder), or undefined: checked before a long recording, not found at its end.
 */
export async function whyUnwritable(path: string): Promise<string | undefined> {
  const dir = dirname(path);
  const info = await stat(dir).catch(() => undefined);
  if (!info) return `its folder ${dir} does not exist`;
  if (!info.isDirectory()) return `${dir} is not a folder`;
  if (
    await access(dir, constants.W_OK).then(
      () => false,
      () => true,
    )
  )
    return `its folder ${dir} is not writable`;
  if ((await stat(path).catch(() => undefined))?.isDirectory()) return "it is a folder";
  return undefined;
}
