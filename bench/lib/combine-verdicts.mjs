// combineVerdicts: the verdicts of several bench runs side by side (issue 33, item 5: "a target met
// in one run and missed in the other is reported as both"). Each run's results JSON carries its
// verdicts (report-rows.mjs: {name, value, pass}); this reads only those, and measures nothing.

const word = { true: "pass", false: "MISS", null: "not measured" };

/**
 * One row per target named in any run, in the order first met: its value and verdict in each
 * run, and the combined verdict: "pass" only when every run that measured it passed, "MISS"
 * when every such run missed, "MISS in run K; pass in run J" (both, named) when they disagree,
 * "not measured" when no run measured it. `failed`: whether any run missed any target, which
 * is what `--strict` fails on.
 */
export function combineVerdicts(runs) {
  const names = [];
  for (const r of runs) for (const v of r.verdicts ?? []) if (!names.includes(v.name)) names.push(v.name);
  const rows = names.map((name) => {
    const per = runs.map((r) => (r.verdicts ?? []).find((v) => v.name === name) ?? { name, value: null, pass: null });
    const measured = per.map((v, i) => ({ i: i + 1, pass: v.pass })).filter((v) => v.pass !== null);
    const passed = measured.filter((v) => v.pass).map((v) => v.i);
    const missed = measured.filter((v) => !v.pass).map((v) => v.i);
    let combined;
    if (measured.length === 0) combined = "not measured";
    else if (missed.length === 0) combined = "pass";
    else if (passed.length === 0) combined = "MISS";
    else combined = `MISS in run ${missed.join(", ")}; pass in run ${passed.join(", ")}`;
    return { name, per, combined, missed: missed.length > 0 };
  });
  return { rows, failed: rows.some((r) => r.missed) };
}

/** The combined verdicts as a markdown table: a column per run (value and verdict), then the combined one. */
export function verdictsTable(runs, labels) {
  const { rows } = combineVerdicts(runs);
  const value = (v) => (v == null ? "-" : typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v));
  const lines = [`| target | ${labels.map((l) => `${l}: value, verdict`).join(" | ")} | both |`, `| --- | ${labels.map(() => "---").join(" | ")} | --- |`];
  for (const r of rows) lines.push(`| ${r.name} | ${r.per.map((v) => `${value(v.value)}, ${word[v.pass]}`).join(" | ")} | ${r.combined} |`);
  return lines.join("\n");
}
