import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, Role, startServer, type StubServer } from "../../src/index.js";
import { WatchEventKind, type WatchSessionResponse } from "../../gen/modelstub/v1/control_pb.js";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";

/*
 * WatchSession's occurrences count a step's calls as a fault plan's `at: {step, occurrence}`
 * does (issue 30): `occurrence` every call, retries included (`count: all`), and
 * `clean_occurrence` the clean run's call a call stands for (`count: clean`), so a harness can
 * tell which call of a plan an event is, with either counting.
 */

const script = `
name: counted
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

/** The calls of `session` made by `run`, from their CALL_ENDED events: [step, occurrence, clean occurrence, rule]. */
async function startedDuring(session: string, plan: string | undefined, run: () => Promise<void>, calls: number): Promise<unknown[][]> {
  const events: WatchSessionResponse[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const watch = await control.watchSession(session, (e) => {
    if (e.kind !== WatchEventKind.CALL_ENDED) return;
    events.push(e);
    if (events.length === calls) resolve();
  });
  if (plan !== undefined) await control.call("SetFaultPlan", { session, plan });
  await run();
  await done;
  watch.close();
  return events.map((e) => [e.stepId, e.occurrence, e.cleanOccurrence, e.fault?.rule ?? null]);
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
    const got = await startedDuring(
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
    const got = await startedDuring(
      "o2",
      undefined,
      async () => {
        await ask("o2", "plan");
        await expect(server.client().generate({ stepId: "act", messages: [{ role: Role.USER, content: "go" }] }, { session: "o2", step: "plan" })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
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
