import { readdirSync, readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import { checkScriptText, loadScriptText } from "../../src/script/load-script.js";
import { compileBudget, holdScriptCompiler } from "../../src/script/script-compiler.js";
import { compileHeapMb, compileTimeBudgetMs, maxCompilesWaiting, maxScriptBytes } from "../../src/script/script-limits.js";
import { Code, type ModelCallError, type ScriptError } from "../../src/index.js";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

/*
 * Issue 27, item 1: LoadScript and SetFaultPlan check their texts in a worker thread with a heap
 * and a time budget (script-compiler.ts). A text past either ends the worker and is refused with
 * RESOURCE_EXHAUSTED; the server serves on, and the next text gets a new worker. The budgets
 * are shrunk here so that an ordinary big script passes them: no test waits out 10 s.
 */

/** A valid script of about `bytes`, an entry with a regex, templates and a tool call every ~330 bytes; and its entries. */
function bigScript(bytes: number): { text: string; entries: number } {
  const entry = (i: number) =>
    `  - name: e${i}\n    match: { regex: 'weather in (?<city>[A-Z][a-z]+) on (\\w+) number ${i}$', ignore_case: true }\n    reply:\n      text: "In {{match.city}} on {{match.2}}: entry ${i}."\n      tool_calls:\n        - name: get_weather\n          arguments: { city: "{{match.city}}", day: "{{match.2}}" }\n`;
  let text = "name: big\nentries:\n";
  let entries = 0;
  while (Buffer.byteLength(text) < bytes - 400) text += entry(entries++);
  return { text, entries };
}

describe("the compile worker's budgets, through LoadScript", () => {
  let s: StubServer;
  // Checking either takes a worker far more than 1 ms; the larger, far more than 16 MiB.
  const big = bigScript(maxScriptBytes);
  const medium = bigScript(maxScriptBytes / 4);
  beforeAll(async () => {
    s = await startStubServer("entries:\n  - repeat: true\n    reply: still here\n");
  });
  afterEach(() => {
    compileBudget.timeMs = compileTimeBudgetMs;
    compileBudget.heapMb = compileHeapMb;
  });
  afterAll(() => s.close());

  const load = (script: string, sourceName: string) => s.control.call("LoadScript", { session: "loads", script, sourceName });
  const refusal = (script: string, sourceName: string) =>
    load(script, sourceName).then(
      () => undefined,
      (e: unknown) => e as ModelCallError,
    );
  const bystanderAnswers = async () => (await s.port.generate(userRequest("hi"), { session: "bystander" })).message?.content;

  it("refuses a script whose check used more CPU time than the budget with RESOURCE_EXHAUSTED, and loads it once the budget allows", async () => {
    compileBudget.timeMs = 1;
    const err = await refusal(medium.text, "medium.yaml");
    expect(err?.code).toBe(Code.RESOURCE_EXHAUSTED);
    expect(err?.details).toBe(
      "cannot load script medium.yaml: checking the script used more than 0.001 s of CPU time (its budget), so it was refused (hint: simplify it or split it into smaller scripts; every other session went on)",
    );
    expect(await bystanderAnswers()).toBe("still here");
    compileBudget.timeMs = compileTimeBudgetMs;
    expect((await load(medium.text, "medium.yaml")).entries).toBe(medium.entries);
  });

  it("refuses a script that needs more heap than the budget with RESOURCE_EXHAUSTED, and the next load works", async () => {
    compileBudget.heapMb = 16;
    const err = await refusal(big.text, "big.yaml");
    expect(err?.code).toBe(Code.RESOURCE_EXHAUSTED);
    expect(err?.details).toBe(
      "cannot load script big.yaml: checking the script needed more than 16 MiB of memory (its budget), so it was refused (hint: simplify it: fewer and shorter values, fewer aliases; every other session went on)",
    );
    expect(await bystanderAnswers()).toBe("still here");
    compileBudget.heapMb = compileHeapMb;
    expect((await load("entries:\n  - reply: fine\n", "small.yaml")).entries).toBe(1);
  });

  it("refuses a text at once with RESOURCE_EXHAUSTED while 32 wait for the worker, and checks those", async () => {
    const compiler = holdScriptCompiler();
    try {
      // Sent together: one runs, maxCompilesWaiting wait, the next is turned away before the first is done.
      const loads = Array.from({ length: maxCompilesWaiting + 2 }, (_, i) =>
        compiler.script(`entries:\n  - reply: answer ${i}\n`, `s${i}.yaml`).then(
          (script) => script.entryCount,
          (e: unknown) => e as ScriptError,
        ),
      );
      const results = await Promise.all(loads);
      expect(results.slice(0, maxCompilesWaiting + 1)).toEqual(Array(maxCompilesWaiting + 1).fill(1));
      const turnedAway = results[maxCompilesWaiting + 1] as ScriptError;
      expect(turnedAway.exhausted).toBe(true);
      expect(turnedAway.message).toBe(
        `cannot load script s${maxCompilesWaiting + 1}.yaml: ${maxCompilesWaiting} scripts and fault plans are already waiting to be checked, so this one was refused (hint: load fewer at once, or wait for the others)`,
      );
    } finally {
      compiler.release();
    }
  });

  it("still says what is wrong with an invalid script, with file:line:col, as INVALID_ARGUMENT", async () => {
    const err = await refusal("entries:\n  - repy: hi\n", "typo.yaml");
    expect(err?.code).toBe(Code.INVALID_ARGUMENT);
    expect(err?.details).toBe("cannot load script typo.yaml:2:5: entries[0]: unknown key `repy` (hint: did you mean `reply`?)");
  });
});

describe("a script compiled through the worker", () => {
  const examples = readdirSync("examples").filter((f) => /\.(ya?ml|json)$/.test(f));

  it("is the script loadScriptText compiles, for every example: its input crosses the worker's boundary unchanged", async () => {
    expect(examples.length).toBeGreaterThan(5);
    const compiler = holdScriptCompiler();
    try {
      for (const f of examples) {
        const text = readFileSync(`examples/${f}`, "utf8");
        const input = checkScriptText(text, f);
        expect(structuredClone(input), f).toStrictEqual(input);
        const viaWorker = await compiler.script(text, f);
        const inThread = loadScriptText(text, f);
        expect({ ...viaWorker, lists: [...viaWorker.lists.keys()] }, f).toEqual({ ...inThread, lists: [...inThread.lists.keys()] });
        expect(
          JSON.stringify([...viaWorker.lists.values()], (_, v: unknown) => (typeof v === "function" ? String(v) : v)),
          f,
        ).toBe(JSON.stringify([...inThread.lists.values()], (_, v: unknown) => (typeof v === "function" ? String(v) : v)));
      }
    } finally {
      compiler.release();
    }
  });

  it("answers the same calls with the same episode bytes as the script compiled in the server's thread", async () => {
    const text = readFileSync("examples/regex-captures.json", "utf8");
    const inThread = await startStubServer(text, { clock: "virtual" });
    const viaWorker = await startStubServer("entries: [{ reply: other }]\n", { clock: "virtual" });
    try {
      await viaWorker.control.call("LoadScript", { session: "s", script: text, sourceName: "test.yaml" });
      const answers: GenerateResponse[][] = [[], []];
      for (const [i, server] of [inThread, viaWorker].entries()) {
        for (const ask of ["weather in Paris on Monday", "ECHO this back", "nothing matches"]) {
          answers[i]!.push(await server.port.generate(userRequest(ask), { session: "s" }).catch((e: unknown) => ({ error: String(e) }) as never));
        }
      }
      expect(answers[1]).toEqual(answers[0]);
      expect(Buffer.from(viaWorker.stub.episodeBytes("s")).equals(Buffer.from(inThread.stub.episodeBytes("s")))).toBe(true);
    } finally {
      await Promise.all([inThread.close(), viaWorker.close()]);
    }
  });
});
