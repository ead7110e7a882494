import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadScriptFile, loadScriptText } from "../../src/script/load-script.js";
import { compileScriptFile } from "../../src/script/script-compiler.js";
import { ScriptError } from "../../src/index.js";

/** A folder holding `script.yaml` with `text`, and the given files beside it; resolves to the script's path. */
async function scriptWith(text: string, files: Record<string, string | Buffer> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "modelstub-text-file-"));
  for (const [name, body] of Object.entries(files)) {
    await mkdir(join(dir, name, ".."), { recursive: true });
    await writeFile(join(dir, name), body);
  }
  await writeFile(join(dir, "script.yaml"), text);
  return join(dir, "script.yaml");
}

const problemOf = async (load: Promise<unknown>) => {
  const err = await load.then(
    () => undefined,
    (e: unknown) => e,
  );
  return err instanceof ScriptError ? err.issues.map((i) => `${i.line}:${i.path}: ${i.message}`) : err;
};

describe("a reply's text_file", () => {
  it("is read from the script's folder as the reply's text, in process and in the compile worker alike", async () => {
    const long = "x".repeat(700_000);
    const path = await scriptWith("entries:\n  - reply: { text_file: replies/one.txt }\n", { "replies/one.txt": long });
    for (const script of [await loadScriptFile(path), await compileScriptFile(path)]) {
      const action = script.lists.get("")!.entries[0]!.action;
      expect(action.kind === "reply" ? action.reply.text.literal : undefined).toBe(long);
    }
  });

  it("is refused, at its line, in a script given as text, next to a text, outside the folder, missing, or over 1 MiB", async () => {
    expect(await problemOf(Promise.resolve().then(() => loadScriptText("entries:\n  - reply: { text_file: a.txt }\n", "<script>")))).toEqual([
      "2:entries[0].reply.text_file: a text_file can only be read from a script loaded from a file",
    ]);
    const path = await scriptWith(
      "entries:\n  - reply: { text: hi, text_file: a.txt }\n  - reply: { text_file: ../a.txt }\n  - reply: { text_file: gone.txt }\n  - reply: { text_file: big.txt }\n",
      { "a.txt": "a", "big.txt": Buffer.alloc(1024 * 1024 + 1, 0x61) },
    );
    const expected = [
      "2:entries[0].reply.text_file: give the text or a text_file, not both",
      '3:entries[1].reply.text_file: cannot read text_file "../a.txt": a text_file is a path relative to the script\'s folder, inside it (no `..`)',
      '4:entries[2].reply.text_file: cannot read text_file "gone.txt": no such file',
      '5:entries[3].reply.text_file: cannot read text_file "big.txt": the file is 1048577 bytes; a text_file holds at most 1048576 (1 MiB)',
    ];
    expect(await problemOf(loadScriptFile(path))).toEqual(expected);
    expect(await problemOf(compileScriptFile(path))).toEqual(expected);
  });
});
