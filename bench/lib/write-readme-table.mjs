// writeReadmeTable: --readme, the table of this run into the bench markers of docs/performance.md.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { cfg } from "./bench-config.mjs";
import { notes, results } from "./bench-setup.mjs";
import { REPO_DIR } from "./paths.mjs";
import { round } from "./stats.mjs";

// --readme: the table (with the machine, the command and the date) replaces what stands between
// the bench markers of docs/performance.md, so the page always shows one whole run, never a
// hand-edited mix.
export function writeReadmeTable(table, failures) {
  const readme = path.join(REPO_DIR, "docs/performance.md");
  const text = fs.readFileSync(readme, "utf8");
  const open = "<!-- section:bench -->";
  const close = "<!-- /section:bench -->";
  const a = text.indexOf(open);
  const b = text.indexOf(close);
  if (a < 0 || b < a) throw new Error(`docs/performance.md has no ${open} ... ${close} markers`);
  const command = `node bench/run.mjs${process.argv
    .slice(2)
    .filter((x) => x !== "--readme")
    .map((x) => ` ${x}`)
    .join("")}`;
  const machine = `${os.cpus().length} x ${os.cpus()[0]?.model ?? "unknown CPU"}, ${round(os.totalmem() / 2 ** 30, 0)} GiB, ${os.type()} ${os.release()}`;
  const block = [
    open,
    `Latest run: \`${command}\` on ${machine}; Node ${process.version}; ${results.meta.date.slice(0, 10)}; load average at start ${results.meta.loadavgAtStart.join(" ")}. Unary load: ${results.meta.loadgen}. ${cfg.rounds} round(s) interleaved, medians; ratios are modelstub over the baseline measured in the same run.`,
    "",
    table,
    "",
    ...notes.map((n) => `- ${n}`),
    ...failures.map((x) => `- FAILED: ${x}`),
    close,
  ].join("\n");
  fs.writeFileSync(readme, text.slice(0, a) + block + text.slice(b + close.length));
  process.stderr.write("bench: wrote the table into docs/performance.md\n");
}
