// loadScript/validateScript through the public entry give exactly what `modelstub validate`
// prints: the built CLI (dist/, built by `pretest`) runs on the same files.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadScript, loadScriptFile, ScriptError, startServer, validateScript, validateScriptFile } from "../../src/index.js";

const bin = new URL("../../bin/modelstub.js", import.meta.url).pathname;
const run = promisify(execFile);

/** What `modelstub validate FILE` prints on stderr, line by line, and its exit code. */
async function cliValidate(file: string): Promise<{ code: number; lines: string[] }> {
  try {
    await run(process.execPath, [bin, "validate", file]);
    return { code: 0, lines: [] };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, lines: e.stderr.split("\n").filter((l) => l !== "") };
  }
}

const bad = {
  "unknown-key.yaml": "entries:\n  - reply: Hi\n    tims: 2\n",
  "yaml-syntax.yaml": "entries:\n  - reply: {{last_user}} said\n",
  "wrong-type.yaml": "entries:\n  - reply: 42\n  - error: { code: NOPE }\n",
  "broken.json": '{ "entries": [ { "reply": "x" }, ] }',
  "empty.yaml": "",
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-validate-"));
  for (const [name, text] of Object.entries(bad)) await writeFile(join(dir, name), text);
  await writeFile(join(dir, "good.yaml"), "entries:\n  - reply: Hi\n  - reply: Bye\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("validateScript", () => {
  for (const [name, text] of Object.entries(bad)) {
    it(`gives the lines modelstub validate prints: ${name}`, async () => {
      const file = join(dir, name);
      const cli = await cliValidate(file);
      expect(cli.code).toBe(1);
      expect(cli.lines.length).toBeGreaterThan(0);
      expect(validateScript(text, file)).toEqual({ ok: false, problems: cli.lines });
      expect(await validateScriptFile(file)).toEqual({ ok: false, problems: cli.lines });
      // loadScript throws the same lines; the message is what `serve` and LoadScript show.
      let err: unknown;
      try {
        loadScript(text, file);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ScriptError);
      expect((err as ScriptError).lines).toEqual(cli.lines);
      expect((err as ScriptError).message).toBe(`cannot load script ${cli.lines.join("\n")}`);
      await expect(loadScriptFile(file)).rejects.toThrow(ScriptError);
    });
  }

  it("counts the entries and lists of a valid script", async () => {
    expect(validateScript("entries:\n  - reply: Hi\n  - reply: Bye\n")).toEqual({ ok: true, entries: 2, lists: 1 });
    expect(await validateScriptFile(join(dir, "good.yaml"))).toEqual({ ok: true, entries: 2, lists: 1 });
    expect(validateScript({ entries: [{ reply: "a" }], steps: { plan: [{ reply: "b" }] } })).toEqual({ ok: true, entries: 2, lists: 2 });
  });

  it("names text <script> and objects <script object> unless given a file name", () => {
    expect(validateScript("entries: 3\n")).toMatchObject({ ok: false, problems: [expect.stringMatching(/^<script>:1:10: entries: /)] });
    expect(validateScript({ entries: [{ reply: 1 }] } as never)).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^<script object>:4:\d+: entries\[0\]\.reply: /)],
    });
  });

  it("reports a missing file as the CLI does", async () => {
    const file = join(dir, "missing.yaml");
    expect(await validateScriptFile(file)).toEqual({ ok: false, problems: (await cliValidate(file)).lines });
  });
});

describe("loadScript", () => {
  it("compiles once; startServer and control.loadScript take the result", async () => {
    const compiled = loadScript("name: greeter\nentries:\n  - reply: Compiled.\n");
    expect(compiled.name).toBe("greeter");
    const server = await startServer({ script: compiled, clock: "virtual" });
    try {
      expect((await server.inProcess().generate({})).message?.content).toBe("Compiled.");
      await server.control.loadScript("other", loadScript({ name: "second", entries: [{ reply: "Again." }] }));
      expect(server.control.sessions()).toEqual([
        { name: "default", calls: 1, running: 0, scriptName: "greeter" },
        { name: "other", calls: 0, running: 0, scriptName: "second" },
      ]);
    } finally {
      await server.close();
    }
  });
});
