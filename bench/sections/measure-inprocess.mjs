// measureInprocess: us per literal-reply call through the in-process port, one child process per round, median.
import path from "node:path";
import { cfg, log } from "../lib/bench-config.mjs";
import { modelstubBuilt, notes } from "../lib/bench-setup.mjs";
import { BENCH_DIR } from "../lib/paths.mjs";
import { runTool } from "../lib/proc.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { median, round } from "../lib/stats.mjs";

const INPROCESS_LITERAL = path.join(BENCH_DIR, "load", "inprocess-literal.mjs");

/** Each round runs load/inprocess-literal.mjs in a fresh process; reports the median us/call. No floor: the target is absolute. */
export async function measureInprocess() {
  const { calls, warmup } = cfg.inprocess;
  const out = { calls, warmup, script: "literal" };
  if (!modelstubBuilt) return out;
  const script = writeScript("literal");
  const rounds = [];
  for (let r = 0; r < cfg.rounds; r++) {
    log(`inprocess round ${r + 1}/${cfg.rounds}`);
    const res = await runTool(INPROCESS_LITERAL, ["--script", script, "--calls", String(calls), "--warmup", String(warmup)], {
      node: true,
      timeoutMs: 120_000,
    });
    try {
      const j = JSON.parse(res.stdout.trim().split("\n").pop());
      if (j.ok !== calls) throw new Error(`${calls - j.ok} calls without a reply`);
      rounds.push(j.usPerCall);
    } catch (e) {
      notes.push(`inprocess round ${r + 1} failed: ${e.message}; ${res.stderr.slice(-300)}`);
    }
  }
  if (rounds.length) out.modelstub = { usPerCall: median(rounds), rounds: rounds.map((x) => round(x, 3)) };
  return out;
}
