import { matrixHtmlScript, matrixHtmlStyle } from "./matrix-html-assets.js";
import type { MatrixReport, PlanReport, ReportPosition } from "./report-types.js";

/*
 * The HTML report of `modelstub matrix run` (issue 30): one self-contained page (inline CSS and
 * script, nothing fetched), so CI can keep it as an artifact and anyone can open it from disk.
 * The grid (positions x kinds, coloured by verdict) is plain HTML and reads without a script;
 * the script draws a plan's timeline when its cell is clicked, from the report embedded as
 * JSON. A page built from the same report is the same bytes (no dates, no random ids).
 */

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes a text for HTML content and attribute values. */
function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c] ?? c);
}

/** JSON that is safe inside <script>: no `</script>`, `<!--`, or line separators JS would choke on. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const verdictMark: Record<string, string> = { pass: "✓", fail: "✗", error: "!" };

function positionLabel(p: ReportPosition): string {
  return `${p.step === "" ? "(main)" : p.step}:${p.occurrence}`;
}

function sameSpot(p: ReportPosition, q: ReportPosition | undefined): boolean {
  return q !== undefined && p.step === q.step && p.occurrence === q.occurrence;
}

/** The single-fault plan of the grid at (position, kind), when the run had one. */
function planAt(plans: readonly PlanReport[], position: ReportPosition, kind: string): PlanReport | undefined {
  return plans.find((p) => p.faults.length === 1 && p.faults[0]?.kind === kind && sameSpot(position, p.faults[0]?.position));
}

function planButton(plan: PlanReport, text: string, cls: string): string {
  const title = `${plan.name}: ${plan.verdict}${plan.reasons.length > 0 ? ` (${plan.reasons.map((r) => r.code).join(", ")})` : ""}`;
  return `<button type="button" class="${cls} v-${esc(plan.verdict)}" data-plan="${esc(plan.id)}" title="${esc(title)}">${esc(text)}</button>`;
}

function grid(report: MatrixReport): { html: string; placed: Set<string> } {
  const placed = new Set<string>();
  const head = report.grid.kinds.map((k) => `<th scope="col">${esc(k)}</th>`).join("");
  const rows = report.grid.positions.map((position) => {
    const cells = report.grid.kinds.map((kind) => {
      const plan = planAt(report.plans, position, kind);
      if (plan === undefined) return `<td class="cell none" title="no plan">·</td>`;
      placed.add(plan.id);
      return `<td>${planButton(plan, verdictMark[plan.verdict] ?? "?", "cell")}</td>`;
    });
    const call = position.call === undefined ? "" : ` <small>call ${position.call}</small>`;
    return `<tr><th scope="row">${esc(positionLabel(position))}${call}</th>${cells.join("")}</tr>`;
  });
  const html = `<table class="grid" id="grid"><thead><tr><th scope="col">position</th>${head}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
  return { html, placed };
}

/** Plans the grid has no cell for (pairs, chaos): a list, coloured the same way. */
function others(report: MatrixReport, placed: Set<string>): string {
  const rest = report.plans.filter((p) => !placed.has(p.id));
  if (rest.length === 0) return "";
  const items = rest.map((p) => `<li>${planButton(p, p.name, "plan-link")} <code>${esc(p.id)}</code></li>`).join("");
  return `<section id="others"><h2>Other plans (${rest.length})</h2><ul class="others">${items}</ul></section>`;
}

/**
 * Renders a `matrix run` report as one self-contained HTML page: the grid of call positions x
 * failure kinds coloured by verdict, plans off the grid (pairs, chaos) listed below it, and,
 * when a plan is clicked, its timeline (each call as a bar over its declared start and end, the
 * fault, retries, the crash and the restart) with, for a plan that failed, its reasons and its
 * calls beside the clean run's. No network access, no external files.
 */
export function matrixHtml(report: MatrixReport): string {
  const { html: gridHtml, placed } = grid(report);
  const s = report.summary;
  const title = `Crash matrix: ${report.script.name}`;
  const clean = report.clean === undefined ? "" : ` · ${planButton(report.clean, "clean run", "plan-link")}`;
  const summary =
    `<p class="summary"><b>${s.plans}</b> plans: <span class="v-pass">${s.passed} passed</span>, ` +
    `<span class="v-fail">${s.failed} failed</span>, <span class="v-error">${s.errors} errors</span>${clean}</p>`;
  const command = `<p class="command"><code>${esc(report.command.join(" "))}</code>${report.script.file ? ` against <code>${esc(report.script.file)}</code>` : ""}</p>`;
  const legend =
    `<p class="legend"><span class="swatch v-pass">✓</span> pass <span class="swatch v-fail">✗</span> fail ` +
    `<span class="swatch v-error">!</span> error (not run) <span class="swatch none">·</span> no plan. Click a cell for its timeline.</p>`;
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title>`,
    `<style>${matrixHtmlStyle}</style></head>`,
    `<body><header><h1>${esc(title)}</h1>${command}${summary}</header>`,
    `<main><section id="matrix"><h2>Positions × kinds</h2>${gridHtml}${legend}</section>`,
    others(report, placed),
    '<section id="detail" hidden></section></main>',
    `<script type="application/json" id="matrix-data">${scriptJson(report)}</script>`,
    `<script>${matrixHtmlScript}</script>`,
    "</body></html>",
    "",
  ].join("\n");
}
