import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { ListInput, ScriptInput } from "./script-schema.js";
import { maxTextFileBytes, maxTextFilesBytes } from "./script-limits.js";

/** Reads a reply's `text_file` by its name as written; throws an Error saying why it cannot. */
export type TextFileReader = (name: string) => string;

/** A problem with one `text_file`, at its place in the script. */
export interface TextFileProblem {
  path: (string | number)[];
  message: string;
  hint: string;
}

/**
 * The reader of `text_file`s next to a script file, in `folder`: a relative path that stays
 * inside it (no `..`), a regular file of at most maxTextFileBytes, read as UTF-8. Read at load,
 * once; the script holds the text from then on.
 */
export function textFilesIn(folder: string): TextFileReader {
  return (name) => {
    if (isAbsolute(name) || name.split(/[\\/]/).includes("..")) throw new Error("a text_file is a path relative to the script's folder, inside it (no `..`)");
    const buffer = readFileSync(join(folder, name));
    if (buffer.length > maxTextFileBytes)
      throw new Error(`the file is ${buffer.length} bytes; a text_file holds at most ${maxTextFileBytes} (${maxTextFileBytes / 1024 / 1024} MiB)`);
    return buffer.toString("utf8");
  };
}

/**
 * The script with each reply's `text_file` replaced by `text`, the file's content, read by
 * `read`; without a reader (a script given as text) every `text_file` is a problem. The input is
 * changed in place (it is the loader's own copy). Files are read in script order, and a script
 * may not read more than maxTextFilesBytes in all.
 */
export function resolveTextFiles(input: ScriptInput, read: TextFileReader | undefined): TextFileProblem[] {
  const problems: TextFileProblem[] = [];
  let total = 0;
  const lists: [(string | number)[], ListInput][] = [];
  if (input.entries) lists.push([["entries"], input.entries]);
  for (const [key, list] of Object.entries(input.steps ?? {})) lists.push([["steps", key], list]);
  for (const [at, list] of lists) {
    const entries = Array.isArray(list) ? list : list.entries;
    const base = Array.isArray(list) ? at : [...at, "entries"];
    entries.forEach((entry, i) => {
      const reply = entry.reply;
      if (typeof reply !== "object" || reply.text_file === undefined) return;
      const path = [...base, i, "reply", "text_file"];
      const name = reply.text_file;
      delete reply.text_file;
      if (reply.text !== undefined) {
        problems.push({ path, message: "give the text or a text_file, not both", hint: "remove one of them" });
        return;
      }
      if (!read) {
        problems.push({
          path,
          message: "a text_file can only be read from a script loaded from a file",
          hint: "serve or load the script by its file name, or write the text in the script",
        });
        return;
      }
      try {
        const text = read(name);
        total += Buffer.byteLength(text, "utf8");
        if (total > maxTextFilesBytes) {
          problems.push({ path, message: `the text_files of a script hold at most ${maxTextFilesBytes / 1024 / 1024} MiB in all`, hint: "split the script" });
          return;
        }
        reply.text = text;
      } catch (err) {
        const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
        problems.push({
          path,
          message: `cannot read text_file ${JSON.stringify(name)}: ${why}`,
          hint: "a text_file's path is relative to the folder of the script",
        });
      }
    });
  }
  return problems;
}

/** A reader of `text_file`s held in memory (the recorder's, before they are written), with the same size bound as files. */
export function textFilesHeld(files: ReadonlyMap<string, string>): TextFileReader {
  return (name) => {
    const text = files.get(name);
    if (text === undefined) throw Object.assign(new Error("no such file"), { code: "ENOENT" });
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > maxTextFileBytes)
      throw new Error(`the file is ${bytes} bytes; a text_file holds at most ${maxTextFileBytes} (${maxTextFileBytes / 1024 / 1024} MiB)`);
    return text;
  };
}
