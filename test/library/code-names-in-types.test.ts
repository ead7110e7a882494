import { describe, expect, expectTypeOf, it } from "vitest";
import { loadFaultPlan, loadScript, ScriptError, type CodeName, type FaultPlanObject, type ScriptObject } from "../../src/index.js";

/*
 * Issue 31, item 7: wherever a script or fault plan object names a status code (an entry's
 * error, a break's error, a fault rule's error, chaos errors), its type is the CodeName union,
 * so a misspelt code fails `tsc` before it fails the load. The `@ts-expect-error` lines are the
 * type test: the checkout's type check (`npx tsc --noEmit`, .ci/run) fails if one of them
 * compiles, and test/package/modelstub.spec.ts does the same against the installed package.
 */

type ScriptEntry = Extract<NonNullable<ScriptObject["entries"]>, unknown[]>[number];
type EntryCode = NonNullable<ScriptEntry["error"]>["code"];

describe("the codes of ScriptObject and FaultPlanObject", () => {
  it("are the CodeName union (but OK) or a number", () => {
    expectTypeOf<EntryCode>().toEqualTypeOf<Exclude<CodeName, "OK"> | number>();
  });

  it("refuse a misspelt code in an entry's error and in its break's, at compile time and at load", () => {
    // @ts-expect-error -- "UNAVAILIBLE" is not a CodeName
    const script: ScriptObject = { entries: [{ error: { code: "UNAVAILIBLE" } }] };
    expect(() => loadScript(script)).toThrow(ScriptError);
    // @ts-expect-error -- nor is "OK": a scripted error is a failure
    const ok: ScriptObject = { entries: [{ error: { code: "OK" } }] };
    expect(() => loadScript(ok)).toThrow(ScriptError);
    const broken: ScriptObject = {
      // @ts-expect-error -- the break's error is checked the same way
      entries: [{ reply: "a b", break: { after_chunks: 1, then: "error", error: { code: "UNAVAILIBLE" } } }],
    };
    expect(() => loadScript(broken)).toThrow(ScriptError);
  });

  it("refuse a misspelt code in a fault rule and in chaos errors", () => {
    // @ts-expect-error -- "UNAVAILIBLE" is not a CodeName
    const rule: FaultPlanObject = { rules: [{ at: { call: 1 }, error: { code: "UNAVAILIBLE" } }] };
    expect(() => loadFaultPlan(rule)).toThrow(ScriptError);
    // @ts-expect-error -- chaos errors are checked the same way
    const chaos: FaultPlanObject = { chaos: { seed: 1, rates: { error: 0.5 }, errors: [{ code: "UNAVAILIBLE" }] } };
    expect(() => loadFaultPlan(chaos)).toThrow(ScriptError);
  });

  it("accept every code name but OK, and the numbers 1 to 16", () => {
    const script: ScriptObject = { entries: [{ error: { code: "UNAVAILABLE" } }, { error: { code: 14 } }] };
    expect(loadScript(script).entryCount).toBe(2);
    const plan: FaultPlanObject = { rules: [{ at: { call: 1 }, error: { code: "RESOURCE_EXHAUSTED" } }] };
    expect(loadFaultPlan(plan).rules).toHaveLength(1);
  });
});
