import { afterEach, describe, expect, it } from "vitest";
import { Code, createGrpcPort, loadFaultPlan, ScriptError, startServer, type FaultPlanSource, type StubServer } from "../../src/index.js";
import { userRequest } from "../support/requests.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const script = "steps:\n  plan:\n    - reply: planned\n";

describe("control.setFaultPlan", () => {
  it("takes a plan object, or one loadFaultPlan compiled once, and the session's next call meets it", async () => {
    server = await startServer({ script, clock: "virtual", logLevel: "silent" });
    const compiled = loadFaultPlan({ name: "once", rules: [{ at: { call: 1 }, error: { code: "UNAVAILABLE" } }] });
    const port = createGrpcPort(server.grpcAddress);
    try {
      const plans: [string, FaultPlanSource][] = [
        ["as-object", { rules: [{ at: { call: 1 }, error: { code: "UNAVAILABLE" } }] }],
        ["compiled", compiled],
      ];
      for (const [session, plan] of plans) {
        await server.control.setFaultPlan(session, plan);
        await expect(port.generate(userRequest("x"), { session, step: "plan" })).rejects.toMatchObject({ code: Code.UNAVAILABLE });
        expect((await port.generate(userRequest("x"), { session, step: "plan" })).message?.content).toBe("planned");
      }
      expect(server.control.episode("compiled").faultPlan?.name).toBe("once");
    } finally {
      port.close();
    }
  });

  it("rejects a plan that is not valid, or names a step the script lacks, with a ScriptError, and keeps the session's episode", async () => {
    server = await startServer({ script, clock: "virtual", logLevel: "silent" });
    const port = createGrpcPort(server.grpcAddress);
    try {
      await port.generate(userRequest("x"), { session: "kept", step: "plan" });
      const bad = await server.control.setFaultPlan("kept", { rules: [{ at: { call: 0 }, hang: true }] }).catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(ScriptError);
      expect((bad as ScriptError).message).toMatch(/^cannot load fault plan <fault plan for session kept>:\d+:\d+: rules\[0\]\.at\.call: /);
      const wrongStep = await server.control.setFaultPlan("kept", "rules: [{ at: { step: plna }, hang: true }]", "p.yaml").catch((e: unknown) => e);
      expect((wrongStep as ScriptError).lines).toEqual([
        expect.stringContaining('p.yaml:1:23: rules[0].at.step: the script "<script>" has no step "plna" (did you mean "plan"?)'),
      ]);
      // Nothing changed: the first call is still in the open episode.
      expect(server.control.episode("kept").calls).toHaveLength(1);
    } finally {
      port.close();
    }
  });
});
