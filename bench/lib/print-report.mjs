// printReport: writes the markdown report (header, table, notes, failures) on stdout; returns the table.
import { cfg } from "./bench-config.mjs";
import { gripmock, gripmockBuild, notes, results } from "./bench-setup.mjs";

export function printReport(rows, failures) {
  const header = ["Measurement", "modelstub", "baseline (floor)", "ratio", "target", "verdict"];
  const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
  const lines = [
    `## modelstub bench (${results.meta.mode}, ${results.meta.date})`,
    "",
    // Whether the gRPC peer ran comes first: a full run without it judges none of its targets.
    gripmock
      ? `GripMock ${gripmock.version}${gripmock.commit ? ` (${gripmock.commit.slice(0, 12)})` : ""}${gripmockBuild.ok ? ", built from source for this run" : ""}.`
      : `**GripMock did not run: ${gripmockBuild.tried ? `it could not be built (${gripmockBuild.reason})` : "not installed"}. Its targets are not measured.**`,
    "",
    `Node ${process.version}, ${results.meta.cpus} CPUs, load average at start ${results.meta.loadavgAtStart.join(" ")}; unary load: ${results.meta.loadgen}; streams: Node load generator${results.http ? "; HTTP: Node http load generator (keep-alive)" : ""}; ${cfg.rounds} round(s), medians.`,
    "",
    table,
    "",
    ...notes.map((n) => `- note: ${n}`),
    ...failures.map((x) => `- FAILED: ${x}`),
    `- total ${results.meta.totalSecs} s`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return table;
}
