import { Code } from "../../src/index.js";
import { describe, expect, it } from "vitest";
import { userRequest } from "../support/requests.js";
import { closeServerAfterEach, grpcPort, inProcess, text } from "./scripted-port-fixture.js";

closeServerAfterEach();

const twoSteps = `
entries:
  - reply: main-1
steps:
  plan:
    - reply: plan-1
    - reply: plan-2
    - reply: plan-3
  act:
    - reply: act-1
    - reply: act-2
`;

describe("step-keyed lists", () => {
  it("advance independently of each other and of the main list", async () => {
    const port = await grpcPort(twoSteps);
    expect(await text(port.generate(userRequest("x"), { step: "plan" }))).toBe("plan-1");
    expect(await text(port.generate(userRequest("x", { stepId: "act" })))).toBe("act-1");
    expect(await text(port.generate(userRequest("x")))).toBe("main-1");
    expect(await text(port.generate(userRequest("x"), { step: "plan" }))).toBe("plan-2");
    expect(await text(port.generate(userRequest("x", { stepId: "act" })))).toBe("act-2");
  });

  it("give the same answers interleaved as one after the other", async () => {
    const port = await grpcPort(twoSteps);
    // Two sessions of one server: each keeps its own place in each list.
    const answersByStep = async (session: string, steps: string[]) => {
      const out: Record<string, (string | undefined)[]> = {};
      for (const step of steps) (out[step] ??= []).push(await text(port.generate(userRequest("x"), { step, session })));
      return out;
    };
    const interleaved = await answersByStep("interleaved", ["plan", "act", "plan", "act", "plan"]);
    const oneAfterTheOther = await answersByStep("one-after-the-other", ["plan", "plan", "plan", "act", "act"]);
    expect(interleaved).toEqual(oneAfterTheOther);
    expect(interleaved).toEqual({ plan: ["plan-1", "plan-2", "plan-3"], act: ["act-1", "act-2"] });
  });

  it("answers NOT_FOUND with a hint for an unknown step", async () => {
    const port = inProcess(twoSteps);
    await expect(port.generate(userRequest("x"), { step: "plna" })).rejects.toMatchObject({
      code: Code.NOT_FOUND,
      details: 'the script has no step "plna" (did you mean "plan"?); its steps are: plan, act',
    });
  });

  it("rejects a request whose step_id and x-modelstub-step disagree", async () => {
    const port = await grpcPort(twoSteps);
    await expect(port.generate(userRequest("x", { stepId: "plan" }), { step: "act" })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: 'the request\'s step_id "plan" and metadata x-modelstub-step "act" disagree; send one of them',
    });
  });

  it("says which step ran out and how many entries it served", async () => {
    const port = inProcess(twoSteps);
    await port.generate(userRequest("x"), { step: "act" });
    await port.generate(userRequest("x"), { step: "act" });
    await expect(port.generate(userRequest("x"), { step: "act" })).rejects.toMatchObject({
      code: Code.FAILED_PRECONDITION,
      details: "steps.act ran out: it served its 2 entries (2 calls); add entries, or set on_exhausted: repeat-last or cycle on this list",
    });
  });
});

describe("on_exhausted", () => {
  it("repeat-last keeps answering with the last entry", async () => {
    const port = await grpcPort(`
entries:
  on_exhausted: repeat-last
  entries:
    - reply: one
    - reply: two
`);
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await text(port.generate(userRequest("x"))));
    expect(got).toEqual(["one", "two", "two", "two"]);
  });

  it("cycle starts the list over", async () => {
    const port = await grpcPort(`
steps:
  loop:
    on_exhausted: cycle
    entries:
      - reply: one
      - reply: two
`);
    const got = [];
    for (let i = 0; i < 5; i++) got.push(await text(port.generate(userRequest("x"), { step: "loop" })));
    expect(got).toEqual(["one", "two", "one", "two", "one"]);
  });
});
