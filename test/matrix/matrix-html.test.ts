import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { matrixHtml } from "../../src/matrix/matrix-html.js";
import type { MatrixReport, PlanReport } from "../../src/index.js";

/*
 * The report is a real one, a MatrixReport (what runMatrix resolves with): the Python executor
 * of examples/executors/ broken on purpose (EXECUTOR_BROKEN=no-journal: it restarts the task
 * after a crash) under every single fault and crash, so three crash plans fail with a tool run
 * twice. It was recorded by the executors' first driver, since replaced by `matrix run` in
 * .ci/run.d/47-executors.sh. The browser check (test/matrix/matrix-html-browser.mjs) renders
 * the same file.
 */
const fixture = new URL("./fixtures/executors-report.json", import.meta.url);
const load = (): MatrixReport => JSON.parse(readFileSync(fixture, "utf8")) as MatrixReport;

/** The buttons of the grid's cells, as [plan id, verdict class]. */
function gridCells(html: string): [string, string][] {
  const grid = html.slice(html.indexOf('<table class="grid"'), html.indexOf("</table>"));
  return [...grid.matchAll(/<button type="button" class="cell v-(\w+)" data-plan="([^"]+)"/g)].map((m) => [m[2] ?? "", m[1] ?? ""]);
}

/** The report as the page's script will read it. */
function embedded(html: string): unknown {
  const m = /<script type="application\/json" id="matrix-data">(.*?)<\/script>/s.exec(html);
  return JSON.parse(m?.[1] ?? "null");
}

describe("matrixHtml()", () => {
  it("draws one cell per plan of the grid, coloured by its verdict", () => {
    const report = load();
    const cells = gridCells(matrixHtml(report));
    expect(cells).toHaveLength(report.plans.length);
    expect(new Map(cells)).toEqual(new Map(report.plans.map((p) => [p.id, p.verdict])));
    expect(cells.filter(([, v]) => v === "fail").map(([id]) => id)).toEqual(["act.1.crash", "act.2.crash", "report.1.crash"]);
  });

  it("has a row per position and a column per kind, and a dot where a kind has no plan", () => {
    const html = matrixHtml(load());
    const rows = html.match(/<tr><th scope="row">/g) ?? [];
    expect(rows).toHaveLength(4);
    expect(html).toContain('<th scope="row">act:2 <small>call 3</small></th>');
    for (const kind of ["unavailable", "internal", "resource-exhausted", "timeout", "hang", "break", "drop", "crash"])
      expect(html).toContain(`<th scope="col">${kind}</th>`);
    // break and drop go to the streamed call only: three positions have none.
    expect(html.match(/class="cell none"/g)).toHaveLength(6);
  });

  it("embeds the whole report for the timelines, so it reads back equal", () => {
    const report = load();
    expect(embedded(matrixHtml(report))).toEqual(report);
  });

  it("is one self-contained page: nothing is fetched", () => {
    const html = matrixHtml(load());
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<link|<img|<iframe|\bsrc=|@import|url\(|https?:\/\//);
  });

  it("lists plans off the grid (pairs, chaos) below it", () => {
    const report = load();
    const pair: PlanReport = {
      ...report.plans[0]!,
      id: "plan.1.unavailable+act.1.timeout-0011aabb",
      name: "pair: plan:1 UNAVAILABLE, act:1 timeout",
      kind: "pair",
    };
    pair.faults = [
      { kind: "unavailable", position: { step: "plan", occurrence: 1 } },
      { kind: "timeout", position: { step: "act", occurrence: 1 } },
    ];
    const html = matrixHtml({ ...report, plans: [...report.plans, pair] });
    expect(html).toContain('<section id="others"><h2>Other plans (1)</h2>');
    expect(html).toContain(`data-plan="${pair.id}"`);
    expect(gridCells(html)).toHaveLength(report.plans.length);
  });

  it("escapes what the report says, in the page and in its embedded JSON", () => {
    const report = load();
    const evil = "</script><script>alert(1)</script> & \u2028";
    report.script.name = evil;
    report.plans[0]!.name = evil;
    report.plans[0]!.reasons = [{ code: "exit-code", message: evil, detail: evil }];
    const html = matrixHtml(report);
    expect(html).not.toContain("<script>alert(1)");
    expect(html.match(/<\/script>/g)).toHaveLength(2); // the data's and the code's own
    expect(html).toContain("<title>Crash matrix: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp;");
    expect(embedded(html)).toEqual(report);
  });

  it("gives the same bytes for the same report", () => {
    expect(matrixHtml(load())).toBe(matrixHtml(load()));
  });
});
