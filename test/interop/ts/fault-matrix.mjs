// The fault-plan proof's TypeScript side, for test/interop/faults.sh: test/faults/retrying-executor.ts
// itself (compiled by faults.sh into a scratch folder whose src/ is dist/src), over the built
// dist/. The Python twin is ../python/fault_matrix.py; both print the same transcript lines.
//
//   node fault-matrix.mjs -addr 127.0.0.1:PORT -executor FILE.js -out DIR PLAN.json...
//
// For each plan file, in session NAME (the file's base name without .json): SetFaultPlan with the
// file's text, the executor's workflow, then GetEpisode (bytes_only), written to DIR/NAME.binpb.
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createGrpcPort } from "../../../dist/src/index.js";
import { createControlClient } from "../../../dist/src/port/control-client.js";

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(`-${name}`);
  if (i < 0 || i + 1 >= args.length) {
    process.stderr.write("usage: fault-matrix.mjs -addr HOST:PORT -executor FILE.js -out DIR PLAN.json...\n");
    process.exit(2);
  }
  const [value] = args.splice(i, 2).slice(1);
  return value;
};
const addr = opt("addr");
const executor = opt("executor");
const out = opt("out");
const { runResearch } = await import(pathToFileURL(resolve(executor)).href);

/** One line per plan, the same in both executors (see ../python/fault_matrix.py). */
function transcript(session, { outcome, attempts, toolRuns }) {
  const said = outcome.ok ? `ok ${outcome.answer}` : `gave up at ${outcome.step} #${outcome.occurrence} with code ${outcome.code}`;
  const tries = attempts.map((a) => `${a.step}#${a.occurrence}.${a.attempt}=${a.code}${a.backoffMs !== undefined ? `+${a.backoffMs}ms` : ""}`).join(" ");
  return `${session}: ${said} | tools ${toolRuns.length} | ${tries}`;
}

const model = createGrpcPort(addr);
const control = createControlClient(addr);
try {
  for (const path of args) {
    const name = basename(path);
    const session = name.endsWith(".json") ? name.slice(0, -".json".length) : name;
    await control.call("SetFaultPlan", { session, plan: readFileSync(path, "utf8"), sourceName: name });
    const run = await runResearch(model, session);
    const ep = await control.call("GetEpisode", { session, bytesOnly: true });
    writeFileSync(join(out, `${session}.binpb`), ep.episodeBinpb);
    console.log(transcript(session, run));
  }
} finally {
  model.close();
  control.close();
}
