// Settings of the doc-block runner (run-doc-blocks.mjs) and the small helpers its modules share:
// the checkout's root, the command line, the timeouts, and how a block's output is shown.
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout this runner belongs to. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The runner's command line: [--list] [--keep] [PAGE.md ...]. */
const args = process.argv.slice(2);
export const listOnly = args.includes("--list");
export const keep = args.includes("--keep");
export const pageArgs = args.filter((a) => !a.startsWith("--"));
export const BLOCK_TIMEOUT_MS = Number(process.env.DOC_BLOCK_TIMEOUT_S ?? 300) * 1000;
export const READY_TIMEOUT_MS = Number(process.env.DOC_READY_TIMEOUT_S ?? 60) * 1000;
export const STOP_TIMEOUT_MS = 30_000;
export const OUTPUT_LINES = 25;

/** A path as shown in the report: relative to the checkout. */
export const rel = (p) => path.relative(ROOT, p) || p;
/** The first OUTPUT_LINES lines of a failure's output, indented, as the report shows them. */
export const firstLines = (out) => {
  const lines = out.replace(/\s+$/, "").split("\n");
  const shown = lines.length > OUTPUT_LINES ? [...lines.slice(0, OUTPUT_LINES), `... (${lines.length - OUTPUT_LINES} more lines)`] : lines;
  return shown.map((l) => `     ${l}`).join("\n");
};
/** Resolves after `ms`. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
