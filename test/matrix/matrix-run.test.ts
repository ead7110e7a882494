import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { loadScriptText } from "../../src/script/load-script.js";
import { runMatrix } from "../../src/matrix/run-matrix.js";
import { jsonLines, junitXml, type MatrixReport, type PlanReport } from "../../src/index.js";

/*
 * Issue 30's proof: `matrix run` drives a real executor process (executor.mjs, over the HTTP
 * front) through single faults and crashes, passes the correct executor, and fails each
 * deliberately broken one with a verdict that names its bug.
 */

const scriptFile = fileURLToPath(new URL("./agent.yaml", import.meta.url));
const script = loadScriptText(readFileSync(scriptFile, "utf8"), scriptFile);
const executor = ["node", fileURLToPath(new URL("./executor.mjs", import.meta.url))];

function run(broken: string, extra: Partial<Parameters<typeof runMatrix>[0]> = {}): Promise<MatrixReport> {
  return runMatrix({ script, scriptFile, command: executor, env: { BROKEN: broken }, kinds: ["unavailable", "internal", "crash"], jobs: 2, ...extra });
}

/** Reads JUnit XML on stdin: the testsuite's attributes, and per testcase its name, failure type (or "pass") and failure text. */
const parseJunit = `
import json, sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
cases = []
for c in suite.findall("testcase"):
    f = c.find("failure")
    cases.append([c.get("name"), f.get("type") if f is not None else "pass", f.text if f is not None else ""])
print(json.dumps({"suite": suite.attrib, "cases": cases}))
`;

const byKind = (r: MatrixReport, kind: string) => r.plans.filter((p) => p.faults.some((f) => f.kind === kind));
const codes = (p: PlanReport) => p.reasons.map((r) => r.code);

describe("modelstub matrix run", () => {
  it("passes a correct executor under every single fault and every crash, restarting it at each crash", async () => {
    const r = await run("");
    expect(r.clean?.verdict).toBe("pass");
    expect(r.grid.positions.map((p) => `${p.step}:${p.occurrence}`)).toEqual(["plan:1", "report:1"]);
    expect(r.plans.map((p) => [p.id.replace(/-[0-9a-f]{8}$/, ""), p.verdict, codes(p)])).toEqual([
      ["plan.1.unavailable", "pass", []],
      ["plan.1.internal", "pass", []],
      ["plan.1.crash", "pass", []],
      ["report.1.unavailable", "pass", []],
      ["report.1.internal", "pass", []],
      ["report.1.crash", "pass", []],
    ]);
    for (const p of byKind(r, "crash")) {
      expect(p.restarts, p.id).toBe(1);
      expect(p.runs.map((x) => [x.restart, x.exitCode, x.signal ?? ""])).toEqual([
        [0, null, "SIGKILL"],
        [1, 0, ""],
      ]);
      // The held call was cut off when its process died; the restart made the calls after it.
      expect(
        p.calls.some((c) => c.fault && c.outcome === "OUTCOME_CANCELLED" && c.restart === 0),
        p.id,
      ).toBe(true);
      expect(p.calls[p.calls.length - 1]!.restart, p.id).toBe(1);
    }
    expect(byKind(r, "internal").map((p) => p.exitCodes)).toEqual([[2], [2]]);
    expect(r.summary).toMatchObject({ plans: 7, passed: 7, failed: 0, errors: 0 });
  });

  it("fails an executor that retries a non-retryable code, naming the exit code and the retry", async () => {
    const r = await run("retry-all", { kinds: ["internal"] });
    expect(r.plans).toHaveLength(2);
    for (const p of r.plans) {
      expect(p.verdict).toBe("fail");
      expect(codes(p)).toEqual(["exit-code", "retried"]);
      expect(p.reasons[0]!.message).toBe("COMMAND ended with exit 0, expected a nonzero exit (the executor gives up on this fault)");
    }
  });

  it("fails an executor that runs a tool again after a crash: the side effect ran twice", async () => {
    const r = await run("rerun", { kinds: ["crash"], positions: "report:1" });
    const [p] = r.plans;
    expect(p!.verdict).toBe("fail");
    expect(codes(p!)).toEqual(["side-effect-twice"]);
    expect(p!.reasons[0]!.message).toMatch(/^the tool call write_file\(\{"path":"notes.txt"\}\) ran 2 times/);
  });

  it("fails a nondeterministic executor under --repeat, with the first differing field", async () => {
    const r = await run("random", { kinds: ["unavailable"], positions: "plan:1", repeat: 2 });
    const [p] = r.plans;
    expect(p!.verdict).toBe("fail");
    expect(codes(p!)).toEqual(["nondeterministic"]);
    expect(p!.reasons[0]!.detail).toMatch(/^run 1 vs run 2: calls\[0\]\.request\.messages\[0\]\.content: "write the notes \(0\.\d+\)" != /);
  });

  it("fails a plan whose rule never struck, as VerifySession reports it", async () => {
    const r = await run("", { kinds: ["unavailable"], positions: "plan:2" });
    const [p] = r.plans;
    expect(codes(p!)).toEqual(["not-struck"]);
    expect(p!.reasons[0]!.message).toBe(
      'the plan\'s rules[0] never struck (at step "plan", occurrence 2): COMMAND made no such call, so the fault tested nothing',
    );
  });

  it("writes JUnit XML that parses, one test case per plan, the failures with their reasons", async () => {
    const r = await run("retry-all", { kinds: ["unavailable", "internal"], positions: "plan:1" });
    // Parsed by a real XML parser (Python's ElementTree), not by the code that wrote it.
    const parsed = JSON.parse(execFileSync("python3", ["-c", parseJunit], { input: junitXml(r), encoding: "utf8" })) as {
      suite: Record<string, string>;
      cases: [string, string, string][];
    };
    expect(parsed.suite).toMatchObject({ tests: "3", failures: "1", errors: "0" });
    expect(parsed.cases.map(([name, type]) => [name.replace(/-[0-9a-f]{8}$/, ""), type])).toEqual([
      ["clean", "pass"],
      ["plan.1.unavailable", "pass"],
      ["plan.1.internal", "exit-code"],
    ]);
    expect(parsed.cases[2]![2]).toContain("[retried] COMMAND retried after a non-retryable fault");
    const lines = jsonLines(r)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as PlanReport);
    expect(lines.map((l) => [l.kind, l.verdict, l.exitCodes])).toEqual([
      ["clean", "pass", [0]],
      ["single", "pass", [0]],
      ["single", "fail", [0]],
    ]);
  });
});
