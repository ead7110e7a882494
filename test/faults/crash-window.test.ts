import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FaultKind, Outcome, startServer, type ModelPort, type StubServer } from "../../src/index.js";
import { runResearch } from "./retrying-executor.js";

/*
 * The crash window, as a worked example (docs quote it). The executor has run the `search` tool
 * and asks the model to read its result (`act`); the model call fails with UNAVAILABLE. The
 * executor retries the model call only: the tool does not run again, the retry sends the same
 * request, and since a fault does not use up the script's entry, the retry gets the answer the
 * failed call would have had.
 */

const script = readFileSync(new URL("./research.yaml", import.meta.url), "utf8");
let server: StubServer;
let model: ModelPort;

beforeAll(async () => {
  server = await startServer({ script, clock: "virtual" });
  model = server.client();
});
afterAll(() => server.close());

it("retries the model call after the tool ran, without running the tool again", async () => {
  await server.control.setFaultPlan("crash-window", {
    name: "act-fails-once",
    rules: [{ at: { step: "act", occurrence: 1 }, error: { code: "UNAVAILABLE", message: "the model fell over after the search" } }],
  });

  const run = await runResearch(model, "crash-window");

  // The executor: one UNAVAILABLE at the first `act`, one retry after a 100 ms backoff, then on.
  expect(run.outcome).toEqual({ ok: true, answer: "Retry UNAVAILABLE and DEADLINE_EXCEEDED; give up on the rest (2 rules found)." });
  expect(run.attempts.slice(0, 4)).toEqual([
    { step: "plan", occurrence: 1, attempt: 1, method: "stream", code: 0 },
    { step: "next", occurrence: 1, attempt: 1, method: "generate", code: 0 },
    { step: "act", occurrence: 1, attempt: 1, method: "stream", code: 14, backoffMs: 100 },
    { step: "act", occurrence: 1, attempt: 2, method: "stream", code: 0 },
  ]);
  // Each tool ran once: the search before the failure was not repeated.
  expect(run.toolRuns).toEqual([
    'search {"query":"modelstub fault plans"}',
    'fetch {"url":"https://docs.example/faults"}',
    'grep {"pattern":"Retry"}',
    'count {"of":"grep"}',
  ]);

  // The episode: call 3 is the fault (rule 0, no entry used), call 4 the retry with the same
  // request, answered by the entry call 3 would have had.
  const episode = server.control.episode("crash-window");
  expect(episode.faultPlan?.name).toBe("act-fails-once");
  const [failed, retried] = [episode.calls[2]!, episode.calls[3]!];
  expect([failed.stepId, failed.outcome, failed.status?.code, failed.entry, failed.fault?.rule, failed.fault?.kind]).toEqual([
    "act",
    Outcome.ERROR,
    14,
    "",
    "rules[0]",
    FaultKind.ERROR,
  ]);
  expect([retried.stepId, retried.outcome, retried.entry, retried.fault]).toEqual(["act", Outcome.OK, "steps.act[0]", undefined]);
  expect(retried.request).toEqual(failed.request);
  expect(retried.response?.message?.content).toBe("Found the page: https://docs.example/faults");
  expect(episode.calls.filter((c) => c.fault !== undefined)).toHaveLength(1);
  expect(episode.calls).toHaveLength(12); // the clean run's 11, and the retry
});
