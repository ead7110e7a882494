import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, FaultKind, ModelCallError, Outcome, Role, startServer, type StubServer } from "../../src/index.js";
import { WatchEventKind, type WatchSessionResponse } from "../../gen/modelstub/v1/control_pb.js";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";

/*
 * WatchSession (issue 30): a harness learns that a call has arrived, and how it ended, from a
 * stream of events instead of polling ListSessions; and VerifySession says when a fault plan's
 * rule never struck. Its occurrences count a step's calls as a fault plan's `at: {step,
 * occurrence}` does: `occurrence` every call, retries included (`count: all`), and
 * `clean_occurrence` the clean run's call a call stands for (`count: clean`), so a harness can
 * tell which call of a plan an event is, with either counting.
 */

const script = `
name: watched
steps:
  plan:
    - reply: "Plan: one."
    - reply: "Plan: two."
  act:
    - reply: "Acted."
`;

let server: StubServer;
let control: ControlClient;

beforeAll(async () => {
  server = await startServer({ script, clock: "virtual" });
  control = createControlClient(server.grpcAddress);
});
afterAll(async () => {
  control.close();
  await server.close();
});

const ask = (session: string, step: string) => server.client().generate({ messages: [{ role: Role.USER, content: "go" }] }, { session, step });

/** Waits until `n` events have arrived: resolved by the listener, never by a timer. */
function collector(n: number): { events: WatchSessionResponse[]; done: Promise<void>; onEvent: (e: WatchSessionResponse) => void } {
  const events: WatchSessionResponse[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  return { events, done, onEvent: (e) => (events.push(e), events.length === n && resolve()) };
}

describe("WatchSession", () => {
  it("reports each call's start (with the fault the plan put on it) and its end, in order", async () => {
    const c = collector(6);
    const watch = await control.watchSession("w1", c.onEvent);
    await control.call("SetFaultPlan", { session: "w1", plan: "rules:\n  - at: { step: plan, occurrence: 1 }\n    error: { code: UNAVAILABLE }\n" });
    await expect(ask("w1", "plan")).rejects.toMatchObject({ code: Code.UNAVAILABLE });
    await ask("w1", "plan");
    await ask("w1", "act");
    await c.done;
    watch.close();
    await watch.closed;
    expect(
      c.events.map((e) => [WatchEventKind[e.kind], Number(e.sequence), e.stepId, e.occurrence, e.fault?.kind ?? null, e.outcome, e.code, e.entry]),
    ).toEqual([
      ["CALL_STARTED", 1, "plan", 1, FaultKind.ERROR, Outcome.UNSPECIFIED, 0, ""],
      ["CALL_ENDED", 1, "plan", 1, FaultKind.ERROR, Outcome.ERROR, Code.UNAVAILABLE, ""],
      ["CALL_STARTED", 2, "plan", 2, null, Outcome.UNSPECIFIED, 0, ""],
      ["CALL_ENDED", 2, "plan", 2, null, Outcome.OK, 0, "steps.plan[0]"],
      ["CALL_STARTED", 3, "act", 1, null, Outcome.UNSPECIFIED, 0, ""],
      ["CALL_ENDED", 3, "act", 1, null, Outcome.OK, 0, "steps.act[0]"],
    ]);
    expect(new Set(c.events.map((e) => e.episode)).size).toBe(1);
  });

  it("tells a held call has arrived while it is still held, so a harness can act on it", async () => {
    const c = collector(1);
    const watch = await control.watchSession("w2", c.onEvent);
    await control.call("SetFaultPlan", { session: "w2", plan: "rules:\n  - at: { step: act }\n    hang: true\n" });
    const held = ask("w2", "act").catch((err: unknown) => err);
    await c.done;
    expect(c.events[0]).toMatchObject({ kind: WatchEventKind.CALL_STARTED, stepId: "act", fault: { kind: FaultKind.HANG, rule: "rules[0]" } });
    expect((await control.listSessions()).find((s) => s.name === "w2")?.running).toBe(1);
    await control.call("ResetSession", { session: "w2" });
    expect(await held).toBeInstanceOf(ModelCallError);
    watch.close();
  });

  it("is refused with a clear status for a bad session name", async () => {
    await expect(control.watchSession("bad name!", () => undefined)).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
  });

  it("ends when the server shuts down", async () => {
    const other = await startServer({ script, clock: "virtual" });
    const client = createControlClient(other.grpcAddress);
    const watch = await client.watchSession("w3", () => undefined);
    await other.close();
    await expect(watch.closed).resolves.toBeUndefined();
    client.close();
  });
});

/** The calls of `session` made by `run`, from their CALL_ENDED events: [step, occurrence, clean occurrence, rule]. */
async function endedDuring(session: string, plan: string | undefined, run: () => Promise<void>, calls: number): Promise<unknown[][]> {
  const c = collector(calls);
  const watch = await control.watchSession(session, (e) => e.kind === WatchEventKind.CALL_ENDED && c.onEvent(e));
  if (plan !== undefined) await control.call("SetFaultPlan", { session, plan });
  await run();
  await c.done;
  watch.close();
  return c.events.map((e) => [e.stepId, e.occurrence, e.cleanOccurrence, e.fault?.rule ?? null]);
}

describe("WatchSession's occurrences", () => {
  it("count every call as `occurrence`, and the clean run's call a retry stands for as `clean_occurrence`, as the plan's rules do", async () => {
    const plan = [
      "rules:",
      "  - at: { step: plan, occurrence: 1 }",
      "    error: { code: UNAVAILABLE }",
      "  - at: { step: plan, occurrence: 2, count: clean }",
      "    timeout: true",
    ].join("\n");
    const got = await endedDuring(
      "o1",
      plan,
      async () => {
        await expect(ask("o1", "plan")).rejects.toMatchObject({ code: Code.UNAVAILABLE });
        await ask("o1", "plan"); // the retry: the clean run's 1st call of plan, the 2nd call made
        await expect(ask("o1", "plan")).rejects.toMatchObject({ code: Code.DEADLINE_EXCEEDED });
        await ask("o1", "plan");
        await ask("o1", "act");
      },
      5,
    );
    expect(got).toEqual([
      ["plan", 1, 1, "rules[0]"],
      ["plan", 2, 1, null],
      ["plan", 3, 2, "rules[1]"], // struck where count: clean says the clean run's 2nd call is
      ["plan", 4, 2, null],
      ["act", 1, 1, null],
    ]);
  });

  it("are equal without a plan, and 0 for a call refused before the plan saw it", async () => {
    const got = await endedDuring(
      "o2",
      undefined,
      async () => {
        await ask("o2", "plan");
        await expect(
          server.client().generate({ stepId: "act", messages: [{ role: Role.USER, content: "go" }] }, { session: "o2", step: "plan" }),
        ).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
        await ask("o2", "plan");
      },
      3,
    );
    expect(got).toEqual([
      ["plan", 1, 1, null],
      ["act", 0, 0, null],
      ["plan", 2, 2, null],
    ]);
  });
});

describe("VerifySession and fault plans", () => {
  it("is not satisfied while a plan rule never struck, and names the rule", async () => {
    await control.call("SetFaultPlan", {
      session: "v1",
      plan: "rules:\n  - at: { step: plan, occurrence: 1 }\n    error: { code: UNAVAILABLE }\n  - at: { step: act, occurrence: 2 }\n    timeout: true\n",
    });
    await expect(ask("v1", "plan")).rejects.toMatchObject({ code: Code.UNAVAILABLE });
    await ask("v1", "plan");
    await ask("v1", "plan");
    await ask("v1", "act");
    const v = await control.call("VerifySession", { session: "v1" });
    expect(v.satisfied).toBe(false);
    expect(v.unused).toEqual([]);
    expect(v.unstruck.map((u) => [u.rule, u.at])).toEqual([["rules[1]", 'step "act", occurrence 2']]);
    expect(v.message).toBe('1 fault rule never struck: rules[1] at step "act", occurrence 2');
    expect(server.control.verify("v1").unstruck).toEqual([{ rule: "rules[1]", at: 'step "act", occurrence 2' }]);
  });

  it("is satisfied once every rule struck and every entry was used", async () => {
    await control.call("SetFaultPlan", { session: "v2", plan: "rules:\n  - at: { step: act }\n    error: { code: UNAVAILABLE }\n" });
    await ask("v2", "plan");
    await ask("v2", "plan");
    await expect(ask("v2", "act")).rejects.toMatchObject({ code: Code.UNAVAILABLE });
    await ask("v2", "act");
    const v = await control.call("VerifySession", { session: "v2" });
    expect([v.satisfied, v.unstruck, v.message]).toEqual([true, [], "every scripted entry was used and every fault rule struck"]);
  });
});

describe("count: clean", () => {
  it("counts only the calls no fault struck, so occurrence K is the K-th call of the clean run", async () => {
    // Faults at plan:1 and, counted on the clean run, plan:2: the retry of plan:1 is not plan:2.
    const plan =
      "rules:\n  - at: { step: plan, occurrence: 1 }\n    error: { code: UNAVAILABLE }\n  - at: { step: plan, occurrence: 2, count: clean }\n    error: { code: INTERNAL }\n";
    await control.call("SetFaultPlan", { session: "c1", plan });
    const outcomes: (string | number)[] = [];
    for (let i = 0; i < 4; i++)
      outcomes.push(
        await ask("c1", "plan").then(
          (r) => r.message?.content ?? "",
          (e: ModelCallError) => e.code,
        ),
      );
    expect(outcomes).toEqual([Code.UNAVAILABLE, "Plan: one.", Code.INTERNAL, "Plan: two."]);
    // Without count: clean the second rule strikes the retry (the 2nd call of plan).
    await control.call("SetFaultPlan", { session: "c2", plan: plan.replace(", count: clean", "") });
    const plain: (string | number)[] = [];
    for (let i = 0; i < 3; i++)
      plain.push(
        await ask("c2", "plan").then(
          (r) => r.message?.content ?? "",
          (e: ModelCallError) => e.code,
        ),
      );
    expect(plain).toEqual([Code.UNAVAILABLE, Code.INTERNAL, "Plan: one."]);
  });
});
