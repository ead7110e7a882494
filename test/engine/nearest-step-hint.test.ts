import { Code } from "../../src/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

const script = `
steps:
  plan: [{ reply: p, repeat: true }]
  act: [{ reply: a, repeat: true }]
  review: [{ reply: r, repeat: true }]
  summarize: [{ reply: s, repeat: true }]
  agent/lint: [{ reply: l, repeat: true }]
  fetch-docs: [{ reply: f, repeat: true }]
`;
const steps = "plan, act, review, summarize, agent/lint, fetch-docs";

let server: StubServer;
beforeAll(async () => {
  server = await startStubServer(script, { clock: "virtual" });
});
afterAll(async () => {
  await server.close();
});

/** The NOT_FOUND message a call with `step` gets, over gRPC. */
async function missFor(step: string): Promise<string> {
  const err = await server.port.generate(userRequest("x"), { step }).then(
    () => undefined,
    (e: { code: number; details: string }) => e,
  );
  expect(err?.code).toBe(Code.NOT_FOUND);
  return err!.details;
}

describe("the nearest-step hint", () => {
  it.each([
    ["revue", "review", "two edits of six letters"],
    ["reveiw", "review", "two letters swapped"],
    ["Review", "review", "case"],
    ["reviews", "review", "one letter too many"],
    ["plna", "plan", "two letters swapped"],
    ["pln", "plan", "one letter missing"],
    ["summarise", "summarize", "British spelling"],
    ["sumarize", "summarize", "one letter missing"],
    ["summary", "summarize", "three edits of nine letters"],
    ["summ", "summarize", "a prefix"],
    ["lint", "agent/lint", "the last part of a namespaced step"],
    ["fetch_docs", "fetch-docs", "another separator"],
    ["fetchdocs", "fetch-docs", "the separator left out"],
    ["fetch", "fetch-docs", "a prefix"],
  ])("points %j to %j (%s)", async (typed, meant) => {
    expect(await missFor(typed)).toBe(`the script has no step ${JSON.stringify(typed)} (did you mean ${JSON.stringify(meant)}?); its steps are: ${steps}`);
  });

  it.each([
    ["ask", "act is two edits of three letters away: another word"],
    ["deploy", "nothing is close"],
    ["verify", "review is four edits away"],
    ["x", "one letter is a prefix of nothing worth naming"],
  ])("gives no hint for %j (%s)", async (typed) => {
    expect(await missFor(typed)).toBe(`the script has no step ${JSON.stringify(typed)}; its steps are: ${steps}`);
  });
});
