import type { MatrixReport, PlanReport } from "./report-types.js";

/** Escapes text for an XML attribute or text node; drops characters XML 1.0 cannot hold. */
function xml(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
  );
}

function testcase(p: PlanReport): string {
  const head = `    <testcase classname="modelstub.matrix.${xml(p.kind)}" name="${xml(p.id)}" time="${(p.durationMs / 1000).toFixed(3)}">`;
  const props = `      <system-out>${xml(`${p.name}\nsession ${p.session}; exit codes ${JSON.stringify(p.exitCodes)}; restarts ${p.restarts}${p.episodePath ? `; episode ${p.episodePath}` : ""}`)}</system-out>\n`;
  if (p.verdict === "pass") return `${head}\n${props}    </testcase>\n`;
  const first = p.reasons[0];
  const body = p.reasons.map((r) => `[${r.code}] ${r.message}${r.detail ? `\n${r.detail}` : ""}`).join("\n\n");
  const tag = p.verdict === "error" ? "error" : "failure";
  return `${head}\n      <${tag} message="${xml(first ? first.message : p.verdict)}" type="${xml(first?.code ?? p.verdict)}">${xml(body)}</${tag}>\n${props}    </testcase>\n`;
}

/**
 * The report as JUnit XML (the schema GitHub Actions, GitLab and Jenkins read): one testsuite,
 * one testcase per plan (the clean run first), a `failure` with the reasons and their diffs for
 * a failed plan, an `error` for one the runner could not run.
 */
export function junitXml(report: MatrixReport): string {
  const all = [...(report.clean ? [report.clean] : []), ...report.plans];
  const failures = all.filter((p) => p.verdict === "fail").length;
  const errors = all.filter((p) => p.verdict === "error").length;
  const name = `modelstub matrix run: ${report.script.name}`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="${xml(name)}" tests="${all.length}" failures="${failures}" errors="${errors}" time="${(report.summary.durationMs / 1000).toFixed(3)}">\n` +
    `  <testsuite name="${xml(name)}" tests="${all.length}" failures="${failures}" errors="${errors}" skipped="0" time="${(report.summary.durationMs / 1000).toFixed(3)}">\n` +
    all.map(testcase).join("") +
    `  </testsuite>\n</testsuites>\n`
  );
}

/** One PlanReport (report-types.ts) per line, the clean run first: what the HTML report reads. */
export function jsonLines(report: MatrixReport): string {
  const all = [...(report.clean ? [report.clean] : []), ...report.plans];
  return all.map((p) => `${JSON.stringify(p)}\n`).join("");
}
