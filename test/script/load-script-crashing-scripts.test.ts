import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maxRegexInputChars, maxScriptBytes, maxScriptErrorBytes } from "../../src/script/script-limits.js";
import { Code, type ModelCallError } from "../../src/index.js";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { aliasBomb, binary, deepJson, manyLongMistakes } from "./script-limits-fixture.js";

// Issue 12, the script side, through ControlService.LoadScript: see script-limits-fixture.ts.

describe("LoadScript with scripts that crashed the loader (over gRPC)", () => {
  let s: StubServer;
  beforeAll(async () => {
    s = await startStubServer("entries:\n  - repeat: true\n    reply: still here\n");
  });
  afterAll(() => s.close());

  const load = (script: string, sourceName: string, session = "hostile") => s.control.call("LoadScript", { session, script, sourceName });

  async function refused(script: string, sourceName: string): Promise<string> {
    const err = (await load(script, sourceName).then(
      () => undefined,
      (e: unknown) => e,
    )) as ModelCallError | undefined;
    expect(err, "the script loaded").toBeDefined();
    expect(err!.code).toBe(Code.INVALID_ARGUMENT);
    expect(err!.details).not.toMatch(/internal error|\n\s+at /);
    // The session keeps the script it had.
    expect((await s.port.generate(userRequest("x"), { session: "hostile" })).message?.content).toBe("still here");
    return err!.details;
  }

  it("answers INVALID_ARGUMENT for an alias bomb, an unresolved alias, JSON 5,000 deep and a binary script", async () => {
    const { readFileSync } = await import("node:fs");
    expect(await refused(readFileSync(aliasBomb, "utf8"), "bomb.yaml")).toMatch(
      /^cannot load script bomb\.yaml:6:8: f\[0\]: the aliases stand for more than 524288 characters \(512 KiB\) of script together: an alias bomb\? \(hint: /,
    );
    expect(await refused("entries:\n  - reply: *greeting\n", "alias.yaml")).toBe(
      "cannot load script alias.yaml:2:12: entries[0].reply: the alias *greeting has no anchor &greeting before it (hint: put &greeting before the value to repeat, above this alias (like `latency: &greeting 250ms`), or check the spelling)",
    );
    expect(await refused(deepJson(5000), "deep.json")).toMatch(
      /^cannot load script deep\.json:1:370: entries\[0\]\.reply\.tool_calls\[0\]\.arguments(\.a){58}: lists and mappings nest deeper than 64 levels here \(hint: /,
    );
    expect(await refused(binary(20_000).toString("latin1"), "binary.yaml")).toMatch(
      /^cannot load script binary\.yaml:1:\d+: the script holds the control character U\+00[01][0-9A-F]: /,
    );
  });

  it("refuses a script over 512 KiB before parsing it", async () => {
    const script = `entries:\n  - reply: "${"x".repeat(maxScriptBytes)}"\n`;
    const details = await refused(script, "big.yaml");
    expect(details).toBe(
      `cannot load script big.yaml:1:1: the script is ${Buffer.byteLength(script)} bytes; the most is ${maxScriptBytes} (512 KiB), so it was not parsed (hint: split it into smaller scripts (each session loads its own with LoadScript): parsing takes about a second per MB)`,
    );
  });

  it("keeps a script's error message under 7 KiB as the status carries it, counting the problems it leaves out", async () => {
    // 1,600 problems of about 450 characters: 720 KB of message before the cap.
    const details = await refused(manyLongMistakes(800), "mistakes.yaml");
    // grpc-js percent-encodes the message (a space takes 3 bytes): that is the size that counts.
    expect(encodeURI(details).length).toBeLessThanOrEqual(maxScriptErrorBytes);
    expect(details).toMatch(/^cannot load script mistakes\.yaml:2:7: entries\[0\]: unknown key `x{300}0` /);
    expect(details).toMatch(/\n\.\.\. and 15\d\d more problems \(first \d+ shown, to keep the message under 7 KiB\)$/);
  });

  it("serves ^(a+)+$ against 64 KiB of a's without stalling another session", async () => {
    expect((await load("entries:\n  - match: { regex: '^(a+)+$' }\n    repeat: true\n    reply: only a's\n", "backtracking.yaml", "regex")).entries).toBe(1);
    // JavaScript's engine needs 2^n steps for n a's and a !: 29 of them took 15 s.
    const miss = s.port.generate(userRequest(`${"a".repeat(maxRegexInputChars - 1)}!`), { session: "regex" }).catch((e: unknown) => e);
    const other = s.port.generate(userRequest("x"), { session: "hostile" });
    expect((await other).message?.content).toBe("still here");
    expect(await miss).toMatchObject({ code: Code.NOT_FOUND });
    expect((await s.port.generate(userRequest("a".repeat(100_000)), { session: "regex" })).message?.content).toBe("only a's");
  });

  it("matches a regex against the first 65,536 characters of the message only", async () => {
    await load("entries:\n  - match: { regex: 'needle (\\w+)!' }\n    repeat: true\n    reply: 'found {{match.1}}'\n", "window.yaml", "window");
    const padding = "x".repeat(maxRegexInputChars - "needle one!".length);
    expect((await s.port.generate(userRequest(`${padding}needle one!`), { session: "window" })).message?.content).toBe("found one");
    // One character later the match would end past the window: the regex does not see it.
    await expect(s.port.generate(userRequest(`x${padding}needle one!`), { session: "window" })).rejects.toMatchObject({ code: Code.NOT_FOUND });
  });
});
