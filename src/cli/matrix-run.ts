import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { parse as parseYaml } from "yaml";
import { matrixKinds, parsePositions, type MatrixKind } from "../script/crash-matrix.js";
import { nearestName } from "../shared/nearest-name.js";
import { parseExpectations } from "../matrix/expectations.js";
import { defaultChaos, parseSeedRange, type ChaosSettings } from "../matrix/matrix-plans.js";
import type { MatrixReport, PlanReport } from "../matrix/report-types.js";
import { runMatrix, type RunMatrixOptions } from "../matrix/run-matrix.js";
import { junitXml, jsonLines } from "../matrix/write-reports.js";
import { readEpisodeFile } from "./episode.js";
import { matrixRunSpecs } from "./matrix-run-specs.js";
import { durationOption, formatOptionsHelp, intOption, resolveOptions, UsageError, type OptionsOf } from "./options.js";
import { checkScriptFile } from "./validate.js";
import { matrixHtml } from "../matrix/matrix-html.js";

/** What `matrix run`'s command line resolves to. */
type MatrixRunOptions = OptionsOf<typeof matrixRunSpecs>;

const usage = `usage: modelstub matrix run SCRIPT [options] -- COMMAND [ARGS...]

Runs COMMAND, an executor, once per plan of SCRIPT's crash matrix, and judges each run. The
first plan is the clean run (no faults). Each plan gets a fresh session: the plan is set, then
COMMAND runs with MODELSTUB_GRPC_ADDR, MODELSTUB_HTTP_URL, MODELSTUB_SESSION, MODELSTUB_PLAN_ID,
MODELSTUB_PLAN_NAME, MODELSTUB_PLAN_JSON, MODELSTUB_RESTART and MODELSTUB_WORKDIR set, and the
episode is fetched. docs/faults.md ("Run the matrix") gives the verdicts and their defaults.
Exit codes: 0 every plan passed, 1 bad arguments or an invalid script, 3 a plan failed.

${formatOptionsHelp(matrixRunSpecs)}
`;

/** The HTML report's writer (src/matrix/matrix-html.ts): a self-contained page of a MatrixReport. */
const htmlReport: ((report: MatrixReport) => string) | undefined = matrixHtml;

function kindsOf(text: string): MatrixKind[] {
  const kinds = text
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  for (const k of kinds) {
    if ((matrixKinds as readonly string[]).includes(k)) continue;
    const near = nearestName(k, matrixKinds);
    throw new UsageError(
      `--kinds: unknown kind ${JSON.stringify(k)}${near ? `; did you mean ${JSON.stringify(near)}?` : ""} (kinds: ${matrixKinds.join(", ")})`,
    );
  }
  return kinds as MatrixKind[];
}

/** The script's own `faults.chaos` section without its seed, when it has one: --chaos-seeds' default. */
async function scriptChaos(file: string): Promise<ChaosSettings | undefined> {
  const input: unknown = parseYaml(await readFile(file, "utf8"));
  const chaos = (input as { faults?: { chaos?: ChaosSettings & { seed?: unknown } } } | null)?.faults?.chaos;
  if (!chaos || typeof chaos !== "object") return undefined;
  const { seed: _seed, ...rest } = chaos;
  return rest;
}

const chaosRateKinds = ["error", "timeout", "hang", "break", "latency"] as const;

/** The chaos of --chaos-seeds: the script's (or the default), with --chaos-rates and --chaos-budget over it. */
function chaosSettings(options: MatrixRunOptions, fromScript: ChaosSettings | undefined): ChaosSettings {
  const chaos: ChaosSettings = { ...(fromScript ?? defaultChaos) };
  const ratesText = options["chaos-rates"];
  if (typeof ratesText === "string") {
    const rates: ChaosSettings["rates"] = {};
    for (const part of ratesText
      .split(",")
      .map((p) => p.trim())
      .filter((p) => p !== "")) {
      const m = /^([a-z]+)=([0-9]*\.?[0-9]+)$/.exec(part);
      if (!m) throw new UsageError(`--chaos-rates: expected KIND=RATE like error=0.2, not ${JSON.stringify(part)}`);
      const kind = m[1] as (typeof chaosRateKinds)[number];
      if (!chaosRateKinds.includes(kind)) {
        const near = nearestName(kind, chaosRateKinds);
        throw new UsageError(
          `--chaos-rates: unknown kind ${JSON.stringify(kind)}${near ? `; did you mean ${JSON.stringify(near)}?` : ""} (kinds: ${chaosRateKinds.join(", ")})`,
        );
      }
      const rate = Number(m[2]);
      if (!(rate >= 0 && rate <= 1)) throw new UsageError(`--chaos-rates: ${kind}=${m[2]} is not a rate from 0 to 1`);
      const parts = Math.round(rate * 1e6);
      if (Math.abs(parts - rate * 1e6) > 1e-6)
        throw new UsageError(`--chaos-rates: ${kind}=${m[2]} has more than 6 decimals (rates are counted in millionths): use ${parts / 1e6}`);
      rates[kind] = rate;
    }
    const sum = Object.values(rates).reduce((a, b) => a + (b ?? 0), 0);
    if (sum > 1 + 1e-9) throw new UsageError(`--chaos-rates: the rates sum to ${Number(sum.toFixed(6))}, more than 1`);
    chaos.rates = rates;
  }
  const budget = intOption(options, "chaos-budget");
  if (budget !== undefined) {
    if (budget < 0) throw new UsageError("--chaos-budget must be 0 (no budget) or more");
    if (budget === 0) delete chaos.budget;
    else chaos.budget = budget;
  }
  return chaos;
}

function line(p: PlanReport): string {
  const mark = p.verdict === "pass" ? "ok  " : p.verdict === "error" ? "ERR " : "FAIL";
  const why = p.reasons
    .map((r) => `\n      [${r.code}] ${r.message}${r.detail ? `\n        ${r.detail.trim().split("\n").slice(0, 6).join("\n        ")}` : ""}`)
    .join("");
  return `${mark} ${p.id}  (${p.name}; exit ${p.exitCodes.map((c) => (c === null ? "signal" : c)).join(",")}${p.restarts > 0 ? `; ${p.restarts} restart${p.restarts === 1 ? "" : "s"}` : ""})${why}\n`;
}

async function write(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
}

/** Reads the command line into runMatrix options (throws UsageError). */
async function optionsOf(argv: string[]): Promise<{ run: RunMatrixOptions; reports: { junit?: string; jsonl?: string; html?: string } } | number> {
  const dash = argv.indexOf("--");
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const command = dash < 0 ? [] : argv.slice(dash + 1);
  const { options, positionals } = resolveOptions(matrixRunSpecs, own);
  if (options["help"]) {
    process.stdout.write(usage);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0 ? "give the script file" : `give one script file before --, not ${positionals.length} (COMMAND goes after --)`,
    );
  if (command.length === 0) throw new UsageError("give the executor to run after --, like: modelstub matrix run agent.yaml -- python3 agent.py");
  const jobs = intOption(options, "jobs");
  const repeat = intOption(options, "repeat");
  if (jobs < 1) throw new UsageError("--jobs must be at least 1");
  if (repeat < 1) throw new UsageError("--repeat must be at least 1");
  if (options["update-golden"] && !options["golden"]) throw new UsageError("--update-golden needs --golden DIR");
  if (options["http-url"] && !options["addr"]) throw new UsageError("--http-url goes with --addr (a server served here gives its own)");
  const timeoutMs = durationOption(options, "timeout", { example: "60s", allowZero: false });
  if (typeof options["positions"] === "string") {
    try {
      parsePositions(options["positions"]);
    } catch (err) {
      throw new UsageError(`--positions: ${(err as Error).message}`);
    }
  }
  if (typeof options["chaos-seeds"] === "string") {
    try {
      parseSeedRange(options["chaos-seeds"]);
    } catch (err) {
      throw new UsageError(`--chaos-seeds: ${(err as Error).message}`);
    }
  }
  const sample = intOption(options, "sample");
  const seed = intOption(options, "seed");
  if (sample !== undefined && sample < 1) throw new UsageError("--sample must be at least 1");
  if (options["seed"] !== "0" && sample === undefined) throw new UsageError("--seed goes with --sample N");
  if ((options["chaos-rates"] !== undefined || options["chaos-budget"] !== undefined) && options["chaos-seeds"] === undefined)
    throw new UsageError("--chaos-rates and --chaos-budget go with --chaos-seeds A..B");
  const scriptFile = positionals[0]!;
  const script = await checkScriptFile(scriptFile);
  if (!script) return 1;
  const chaos = typeof options["chaos-seeds"] === "string" ? chaosSettings(options, await scriptChaos(scriptFile)) : undefined;
  const expectFile = options["expect"];
  const run: RunMatrixOptions = {
    script,
    scriptFile,
    command,
    kinds: kindsOf(options["kinds"]),
    pairs: options["pairs"],
    cleanPositions: options["clean-positions"],
    jobs,
    repeat,
    timeoutMs,
    clock: options["clock"],
    updateGolden: options["update-golden"],
    ...(typeof options["positions"] === "string" ? { positions: options["positions"] } : {}),
    ...(typeof options["from-episode"] === "string" ? { episode: (await readEpisodeFile(options["from-episode"])).episode } : {}),
    ...(typeof options["chaos-seeds"] === "string" ? { chaosSeeds: options["chaos-seeds"], chaos } : {}),
    ...(sample !== undefined ? { sample, sampleSeed: seed } : {}),
    ...(typeof options["addr"] === "string" ? { addr: options["addr"] } : {}),
    ...(typeof options["http-url"] === "string" ? { httpUrl: options["http-url"] } : {}),
    ...(typeof options["control-token"] === "string" ? { controlToken: options["control-token"] } : {}),
    ...(typeof options["golden"] === "string" ? { golden: options["golden"] } : {}),
    ...(expectFile ? { expect: parseExpectations(await readFile(expectFile, "utf8"), expectFile) } : {}),
    ...(typeof options["check-hook"] === "string" ? { checkHook: options["check-hook"] } : {}),
    ...(typeof options["out"] === "string" ? { outDir: options["out"] } : {}),
    onPlan: (p) => process.stderr.write(line(p)),
  };
  if (options["html"] && !htmlReport) throw new UsageError("--html: this build of modelstub has no HTML report");
  return { run, reports: { junit: options["junit"], jsonl: options["jsonl"], html: options["html"] } };
}

/** `modelstub matrix run SCRIPT -- COMMAND`: runs the executor under every plan; exit 3 when a plan failed. */
export async function matrixRun(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = await optionsOf(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub matrix run: ${err.message}\n(run \`modelstub matrix run --help\` for the options)\n`);
      return 1;
    }
    const e = err as NodeJS.ErrnoException;
    process.stderr.write(`modelstub matrix run: ${e.message}\n`);
    return 1;
  }
  if (typeof parsed === "number") return parsed;
  let report: MatrixReport;
  try {
    report = await runMatrix(parsed.run);
  } catch (err) {
    process.stderr.write(`modelstub matrix run: ${(err as Error).message}\n`);
    return 1;
  }
  const { junit, jsonl, html } = parsed.reports;
  if (junit) await write(junit, junitXml(report));
  if (jsonl) await write(jsonl, jsonLines(report));
  if (html && htmlReport) await write(html, htmlReport(report));
  const s = report.summary;
  process.stderr.write(
    `modelstub matrix run: ${s.plans} plans (the clean run included): ${s.passed} passed, ${s.failed} failed, ${s.errors} could not run; episodes in ${dirname(report.clean?.episodePath ?? ".")}\n`,
  );
  return s.failed + s.errors === 0 ? 0 : 3;
}
