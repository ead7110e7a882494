import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptError, startServer, type StubServer } from "../../src/index.js";
import { deepBrackets } from "../script/script-limits-fixture.js";
import { userRequest } from "../support/requests.js";

/*
 * Issue 27, item 1, through the library: control.loadScript and control.setFaultPlan check texts
 * in the compile worker as LoadScript does. 2,000 brackets, sent a few times, aborted the
 * process that ran the server (here: the test's own).
 */

describe("control.loadScript and control.setFaultPlan with texts nested 2,000 deep", () => {
  let server: StubServer;
  beforeAll(async () => {
    server = await startServer({ script: "entries:\n  - repeat: true\n    reply: still here\n", logLevel: "silent" });
  });
  afterAll(() => server.close());

  it("reject each time with a ScriptError saying where, and the server serves on", async () => {
    for (let i = 0; i < 3; i++) {
      const script = await server.control.loadScript("s", deepBrackets(2000, "entries: "), "deep.yaml").catch((e: unknown) => e);
      expect(script).toBeInstanceOf(ScriptError);
      expect((script as ScriptError).lines[0]).toMatch(/^deep\.yaml:1:73: entries(\[0\]){63}: lists and mappings nest deeper than 64 levels here/);
      const plan = await server.control.setFaultPlan("s", deepBrackets(2000, "rules: "), "deep-plan.yaml").catch((e: unknown) => e);
      expect(plan).toBeInstanceOf(ScriptError);
      expect((plan as ScriptError).exhausted).toBe(false);
      expect((plan as ScriptError).lines[0]).toMatch(/^deep-plan\.yaml:1:71: rules(\[0\]){63}: lists and mappings nest deeper than 64 levels here/);
    }
    expect((await server.client().generate(userRequest("hi"), { session: "s" })).message?.content).toBe("still here");
  });
});
