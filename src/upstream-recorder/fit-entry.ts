import type { CompiledEntry } from "../script/compiled-script.js";
import { ScriptError } from "../script/script-error.js";
import { compileRecordedEntry } from "./answer-entry.js";
import type { RecordedEntry } from "./record-entry.js";

/** A compile error's first problem, without the place (the entry is the recorder's, not a file). */
const problemOf = (err: unknown) => (err instanceof ScriptError && err.issues[0] ? err.issues[0].message : (err as Error).message.split("\n")[0]!);

/** A reply text longer than this, in UTF-8 bytes, is recorded as a `text_file` beside the script. */
const textFileFromBytes = 64 * 1024;

/**
 * Makes a recorded entry fit a script, and compiles it as the written script will: a long text
 * goes to `textFiles` as `textFileName`; explicit chunks that pass the size an entry may hold are
 * dropped; an answer past what a script may hold at all becomes an INTERNAL error (and
 * `recorded.unrecorded` says why). Changes `recorded` in place.
 */
export function fitEntry(recorded: RecordedEntry, textFileName: string, textFiles: Map<string, string>): CompiledEntry {
  let compiled: CompiledEntry;
  // A long text goes beside the script, as a text_file: the script stays small enough to read
  // and to serve however long the answers (a script holds 512 KiB; a text_file up to 1 MiB).
  const reply = "reply" in recorded.entry && typeof recorded.entry.reply === "object" ? recorded.entry.reply : undefined;
  if (reply?.text !== undefined && Buffer.byteLength(reply.text, "utf8") > textFileFromBytes) {
    const name = textFileName;
    textFiles.set(name, reply.text);
    const { text, ...rest } = reply;
    recorded.entry = { ...recorded.entry, reply: { ...rest, text_file: name } } as typeof recorded.entry;
    recorded.comments.push(`its text (${Buffer.byteLength(text, "utf8")} bytes) is in ${name}, beside this script`);
  }
  try {
    compiled = compileRecordedEntry(recorded.entry, textFiles);
  } catch (err) {
    const why = problemOf(err);
    const now = "reply" in recorded.entry && typeof recorded.entry.reply === "object" ? recorded.entry.reply : undefined;
    if (now?.chunks) {
      // The upstream's chunks (--keep-chunks) cost a line each: a stream of tens of thousands
      // of deltas passes the size an entry may hold where its text alone does not. The text
      // is kept, cut by the words rule, which is also what the client is answered with.
      const { chunks, ...rest } = now;
      recorded.entry = { ...recorded.entry, reply: rest } as typeof recorded.entry;
      recorded.comments.push(
        `--keep-chunks not kept: the upstream's ${chunks.length} chunks would pass the size an entry may hold (${why}); cut by the words rule`,
      );
    }
    try {
      compiled = compileRecordedEntry(recorded.entry, textFiles);
    } catch (again) {
      // An answer past what a script and its text_file may hold (a text over 1 MiB): an error
      // stands in for it, said to the client, in the script, and by `record`'s exit status.
      const problem = `the answer cannot be written as a script entry: ${problemOf(again)}`;
      recorded.comments.push(`not recorded: ${problem}; the client got this error in its place`);
      recorded.entry = { error: { code: "INTERNAL", message: "modelstub record could not write this reply as a script entry" } };
      recorded.unrecorded = problem;
      textFiles.delete(textFileName);
      compiled = compileRecordedEntry(recorded.entry);
    }
  }
  return compiled;
}
