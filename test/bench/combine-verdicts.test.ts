import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs module of the bench, no types.
import { combineVerdicts, verdictsTable } from "../../bench/lib/combine-verdicts.mjs";

/*
 * Issue 33, item 5: two full runs back to back judge the targets, and a target met in one and
 * missed in the other is reported as both, never as met. `node bench/run.mjs --verdicts-from
 * A.json,B.json [--strict]` prints this table from the runs' results and exits 1 under --strict
 * when any run missed any target.
 */
const run = (verdicts: [string, number | null, boolean | null][]) => ({ verdicts: verdicts.map(([name, value, pass]) => ({ name, value, pass })) });

describe("the verdicts of two bench runs", () => {
  const first = run([
    ["unary c=16 throughput", 0.93, true],
    ["echo grpc", 1.4, true],
    ["startup", 1.3, false],
    ["gripmock c=16", null, null],
  ]);
  const second = run([
    ["unary c=16 throughput", 0.86, false],
    ["echo grpc", 1.5, true],
    ["startup", 1.25, false],
    ["gripmock c=16", 1.1, true],
    ["import", 0.2, true],
  ]);

  it("reports a target met in one run and missed in the other as both, naming the runs", () => {
    const { rows, failed } = combineVerdicts([first, second]);
    const combined = Object.fromEntries(rows.map((r: { name: string; combined: string }) => [r.name, r.combined]));
    expect(combined).toEqual({
      "unary c=16 throughput": "MISS in run 2; pass in run 1",
      "echo grpc": "pass",
      startup: "MISS",
      // Measured in one run only: judged by that run; absent from a run is "not measured" there.
      "gripmock c=16": "pass",
      import: "pass",
    });
    expect(failed).toBe(true);
  });

  it("fails --strict only when some run missed some target, and never counts 'not measured' as met or missed", () => {
    expect(combineVerdicts([run([["a", 1, true]]), run([["a", null, null]])])).toMatchObject({ failed: false, rows: [{ combined: "pass" }] });
    expect(combineVerdicts([run([["a", null, null]]), run([["a", null, null]])])).toMatchObject({ failed: false, rows: [{ combined: "not measured" }] });
  });

  it("prints each run's value and verdict beside the combined one", () => {
    const table: string = verdictsTable([first, second], ["run 1", "run 2"]);
    expect(table.split("\n")[0]).toBe("| target | run 1: value, verdict | run 2: value, verdict | both |");
    expect(table).toContain("| unary c=16 throughput | 0.93, pass | 0.86, MISS | MISS in run 2; pass in run 1 |");
    expect(table).toContain("| gripmock c=16 | -, not measured | 1.1, pass | pass |");
  });
});
