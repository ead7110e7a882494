import { open } from "node:fs/promises";
import { ScriptError, type ScriptIssue } from "./script-error.js";
import { maxScriptBytes } from "./script-limits.js";

/*
 * Reading a script or fault plan file, bounded by maxScriptBytes. Apart from load-script.ts so
 * that a process which compiles in the worker (script-compiler.ts) reads files without loading
 * yaml and zod.
 */

/**
 * The problem with a script too big to parse, or undefined; `bytes` is its size in UTF-8, or
 * undefined for "more than the limit" (a file that kept going past it).
 */
export function sizeIssue(bytes: number | undefined, file: string): ScriptIssue | undefined {
  if (bytes !== undefined && bytes <= maxScriptBytes) return undefined;
  return {
    file,
    line: 1,
    column: 1,
    path: "",
    message: `the script is ${bytes ?? `more than ${maxScriptBytes}`} bytes; the most is ${maxScriptBytes} (${maxScriptBytes / 1024} KiB), so it was not parsed`,
    hint: "split it into smaller scripts (each session loads its own with LoadScript): parsing takes about a second per MB",
  };
}

/**
 * Reads at most maxScriptBytes of a file: a file too big is refused by its size, unread, and one
 * that keeps going past the limit (a pipe, /dev/zero, a file still growing) once it passes it.
 */
async function readScriptFile(path: string): Promise<string> {
  const file = await open(path, "r");
  try {
    const tooBig = sizeIssue((await file.stat()).size, path);
    if (tooBig) throw new ScriptError([tooBig]);
    const buffer = Buffer.alloc(maxScriptBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxScriptBytes) throw new ScriptError([sizeIssue(undefined, path)!]);
    }
    return buffer.toString("utf8", 0, length);
  } finally {
    await file.close();
  }
}

/** Reads a script or fault plan file as readScriptFile does; a missing or unreadable file is a ScriptError too. */
export async function readSourceFile(path: string): Promise<string> {
  try {
    return await readScriptFile(path);
  } catch (err) {
    if (err instanceof ScriptError) throw err;
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
    throw new ScriptError([
      {
        file: path,
        line: 0,
        column: 0,
        path: "",
        message: `cannot read the file: ${reason}`,
        hint: "check the path; a relative path starts from the current directory",
      },
    ]);
  }
}
