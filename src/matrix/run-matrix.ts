// Longer than 250 lines because it is the runner's one loop: a plan's run (set the plan, run
// COMMAND, fetch and judge the episode), the list of plans, and the jobs that run them at once.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import type { VerifySessionResponse } from "../../gen/modelstub/v1/control_pb.js";
import { episodeDifference } from "../engine/episode-difference.js";
import { createControlClient, type ControlClient } from "../port/control-client.js";
import type { CompiledScript } from "../script/compiled-script.js";
import { parsePositions, positionsFromEpisode, selectPositions, unknownPositionSteps, type MatrixKind, type MatrixPosition } from "../script/crash-matrix.js";
import { expectationOf, type ExpectationsInput } from "./expectations.js";
import { judgeRun } from "./judge-plan.js";
import { cleanPlan, parseSeedRange, runnerPlans, type RunnerPlan, type RunnerPlanOptions } from "./matrix-plans.js";
import { episodeJson, reportCalls } from "./plan-report.js";
import type { MatrixReport, PlanReport } from "./report-types.js";
import { checkGolden, hookEnv, runHook } from "./check-plan.js";
import { runPlan, sessionFor, type PlanRun, type PlanRunContext } from "./run-plan.js";
import { serveScript } from "./serve-script.js";

/** What `matrix run` runs, and how. Only `script` and `command` are required. */
export interface RunMatrixOptions {
  /** The script the server serves (compiled): positions and steps are checked against it. */
  script: CompiledScript;
  /** The script's file, for the report. */
  scriptFile?: string;
  /** COMMAND and its arguments: the executor, run once per plan (and again after each crash). */
  command: readonly string[];
  /** A running server's gRPC HOST:PORT (serving `script`); default: the runner serves `script` itself. */
  addr?: string;
  /** With `addr`: the HTTP front's base URL to give COMMAND as MODELSTUB_HTTP_URL. */
  httpUrl?: string;
  /** With `addr`: the server's control token. */
  controlToken?: string;
  /** The clock of the server the runner starts (default `real`: crash plans need held calls held). */
  clock?: "real" | "virtual";
  /** Positions: a list, or text like `plan:1-3,act:2`. With `episode`, picked among its calls. */
  positions?: readonly MatrixPosition[] | string;
  /** An episode of a clean run to take positions from (default: the runner's own clean run). */
  episode?: Episode;
  /** Kinds crossed with positions (default `unavailable,timeout`); `crash` kills and restarts COMMAND. */
  kinds?: readonly MatrixKind[];
  /** Two faults per plan. */
  pairs?: boolean;
  /** Occurrences count the clean run's calls (`count: clean`): see docs/faults.md. */
  cleanPositions?: boolean;
  /** Chaos plans, one per seed: `A..B` or a range. */
  chaosSeeds?: string | { from: number; to: number };
  /** The chaos section besides the seed: rates, errors, budget, scope (default: errors and timeouts at 10% each, budget 2). */
  chaos?: RunnerPlanOptions["chaos"];
  /** Run only this many plans after the clean run, picked by `sampleSeed` (samplePlans in matrix-plans.ts): a bounded, reproducible slice of a large matrix. */
  sample?: number;
  /** The sample's seed (default 0): another seed, another sample of the same size. */
  sampleSeed?: number;
  /** Plans run at once, each on its own session (default 1). */
  jobs?: number;
  /** Runs of each plan whose episodes must be byte-identical (default 1). */
  repeat?: number;
  /** A directory of golden episodes, `<plan id>.episode.binpb`, to compare with. */
  golden?: string;
  /** Write (or overwrite) the golden episodes instead of comparing. */
  updateGolden?: boolean;
  /** Expectations by kind and plan id (an --expect file, parsed). */
  expect?: ExpectationsInput;
  /** A shell command run after each plan with the plan's environment and MODELSTUB_EPISODE (the episode's JSON): exit 0 passes. */
  checkHook?: string;
  /** Where episodes and workdirs go (default: a new directory under the system's temp dir). */
  outDir?: string;
  /** SIGKILL one start of COMMAND after this long (default 60 s). */
  timeoutMs?: number;
  /** COMMAND's working directory (default: this process's). */
  cwd?: string;
  /** Extra environment for COMMAND. */
  env?: NodeJS.ProcessEnv;
  /** Told of each plan's report as it finishes (in finishing order). */
  onPlan?: (report: PlanReport) => void;
}

interface Runner {
  ctx: PlanRunContext;
  options: RunMatrixOptions;
  outDir: string;
  clean: Episode | undefined;
}

/** Runs one plan (all its repetitions) and judges it. Never rejects: a failure to run is verdict `error`. */
async function runOne(r: Runner, plan: RunnerPlan): Promise<{ report: PlanReport; episode?: Episode }> {
  const t0 = performance.now();
  const session = sessionFor(plan.id, "m-");
  const workdir = join(r.outDir, "work", session);
  const episodePath = join(r.outDir, "episodes", `${plan.id}.json`);
  const base = { id: plan.id, name: plan.name, kind: plan.kind, faults: plan.faults, session };
  try {
    const repeat = Math.max(1, r.options.repeat ?? 1);
    const runs: PlanRun[] = [];
    let unstruck: VerifySessionResponse["unstruck"] = [];
    for (let i = 0; i < repeat; i++) {
      runs.push(await runPlan(r.ctx, plan, session, workdir));
      // Asked before the next repetition starts the session afresh.
      if (i === 0) unstruck = (await r.ctx.control.call("VerifySession", { session })).unstruck;
    }
    const first = runs[0]!;
    const reasons = judgeRun(plan, first, expectationOf(plan, r.options.expect), plan.kind === "clean" ? undefined : r.clean);
    for (const u of unstruck)
      reasons.push({ code: "not-struck", message: `the plan's ${u.rule} never struck (at ${u.at}): COMMAND made no such call, so the fault tested nothing` });
    runs.slice(1).forEach((run, i) => {
      if (Buffer.compare(Buffer.from(run.bytes), Buffer.from(first.bytes)) === 0) return;
      const diff = episodeDifference(first.episode, run.episode) ?? "the bytes differ, every field is equal";
      reasons.push({
        code: "nondeterministic",
        message: `run ${i + 2} of ${repeat} recorded a different episode than run 1: COMMAND is nondeterministic under this plan`,
        detail: `run 1 vs run ${i + 2}: ${diff}`,
      });
    });
    if (r.options.golden) {
      const g = await checkGolden(r.options.golden, plan.id, first, r.options.updateGolden === true);
      if (g) reasons.push(g);
    }
    await mkdir(join(r.outDir, "episodes"), { recursive: true });
    await writeFile(episodePath, episodeJson(first.episode));
    if (r.options.checkHook) {
      const hook = await runHook(r.options.checkHook, hookEnv(r.ctx, plan, session, workdir, episodePath), r.options.cwd);
      if (hook.code !== 0)
        reasons.push({
          code: "check-hook",
          message: `the check hook ended with ${hook.code === null ? "a signal" : `exit ${hook.code}`}`,
          detail: hook.output,
        });
    }
    const report: PlanReport = {
      ...base,
      verdict: reasons.length === 0 ? "pass" : "fail",
      runs: first.starts.map((s) => ({ restart: s.restart, exitCode: s.exitCode, ...(s.signal ? { signal: s.signal } : {}) })),
      exitCodes: runs.map((run) => run.starts[run.starts.length - 1]!.exitCode),
      restarts: first.starts.length - 1,
      reasons,
      episodePath,
      calls: reportCalls(first.episode, first.restartOf),
      durationMs: Math.round(performance.now() - t0),
    };
    return { report, episode: first.episode };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const report: PlanReport = {
      ...base,
      verdict: "error",
      runs: [],
      exitCodes: [],
      restarts: 0,
      reasons: [{ code: "runner", message: `cannot run the plan: ${message}` }],
      calls: [],
      durationMs: Math.round(performance.now() - t0),
    };
    return { report };
  }
}

/** The plans after the clean run: positions from the options, else the clean run's calls. */
function planList(options: RunMatrixOptions, clean: Episode | undefined): { plans: RunnerPlan[]; positions: MatrixPosition[] } {
  const fromEpisode = options.episode ?? clean;
  let positions: MatrixPosition[];
  if (options.positions !== undefined) {
    const given = typeof options.positions === "string" ? parsePositions(options.positions) : [...options.positions];
    positions = options.episode ? selectPositions(given, positionsFromEpisode(options.episode)) : given;
  } else positions = fromEpisode ? positionsFromEpisode(fromEpisode) : [];
  const unknown = unknownPositionSteps(positions, options.script);
  if (unknown.length > 0) throw new Error(`${unknown.join("; ")} (a plan there would never strike)`);
  const seeds = typeof options.chaosSeeds === "string" ? parseSeedRange(options.chaosSeeds) : options.chaosSeeds;
  const plans = runnerPlans({
    positions,
    kinds: options.kinds ?? ["unavailable", "timeout"],
    pairs: options.pairs === true,
    cleanPositions: options.cleanPositions === true,
    ...(seeds ? { chaosSeeds: seeds } : {}),
    ...(options.chaos ? { chaos: options.chaos } : {}),
    ...(options.sample !== undefined ? { sample: options.sample, seed: options.sampleSeed ?? 0 } : {}),
  });
  return { plans, positions };
}

/** Runs `plans` on `jobs` workers; reports come back in plan order. */
async function runAll(r: Runner, plans: readonly RunnerPlan[], jobs: number): Promise<PlanReport[]> {
  const reports: PlanReport[] = new Array(plans.length);
  let next = 0;
  const worker = async () => {
    while (next < plans.length) {
      const i = next++;
      const { report } = await runOne(r, plans[i]!);
      reports[i] = report;
      r.options.onPlan?.(report);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, plans.length)) }, worker));
  return reports;
}

/**
 * Runs an executor under every plan of a crash matrix (docs/faults.md, "Run the matrix"): first
 * a clean run (no faults), then each plan on a fresh session of its own, `jobs` at a time. For
 * each plan: set the plan, run COMMAND with the MODELSTUB_* environment (killing and restarting
 * it at crash rules), fetch the episode, and judge it: the exit code and the final reply against
 * the expectation, every rule struck, the same bytes over `repeat` runs, the golden episode, no
 * tool side effect run more often than in the clean run, and the check hook. Resolves with the
 * whole report; rejects only when the plans cannot be made (a bad position, an unknown step) or
 * the server cannot be reached.
 */
export async function runMatrix(options: RunMatrixOptions): Promise<MatrixReport> {
  if (options.command.length === 0) throw new Error("runMatrix: give the COMMAND to run");
  if (options.positions !== undefined && typeof options.positions !== "string") {
    const unknown = unknownPositionSteps(options.positions, options.script);
    if (unknown.length > 0) throw new Error(unknown.join("; "));
  }
  const t0 = performance.now();
  const outDir = options.outDir ?? (await mkdtemp(join(tmpdir(), "modelstub-matrix-")));
  const server = options.addr ? undefined : await serveScript(options.script, options.clock ?? "real");
  const grpcAddress = options.addr ?? server!.grpcAddress;
  const control: ControlClient = createControlClient(grpcAddress, options.controlToken ? { token: options.controlToken } : {});
  try {
    await control.ready(10_000).catch((err: unknown) => Promise.reject(new Error(`cannot connect to ${grpcAddress}: ${(err as Error).message}`)));
    const ctx: PlanRunContext = {
      control,
      command: options.command,
      grpcAddress,
      httpUrl: options.addr ? options.httpUrl : server!.httpUrl,
      cwd: options.cwd,
      env: options.env ?? {},
      timeoutMs: options.timeoutMs ?? 60_000,
    };
    const r: Runner = { ctx, options, outDir, clean: undefined };
    const cleanRun = await runOne(r, cleanPlan);
    options.onPlan?.(cleanRun.report);
    r.clean = cleanRun.episode;
    const { plans, positions } = planList(options, cleanRun.episode);
    const reports = await runAll(r, plans, options.jobs ?? 1);
    const all = [cleanRun.report, ...reports];
    return {
      script: { name: options.script.name, ...(options.scriptFile ? { file: options.scriptFile } : {}) },
      command: [...options.command],
      clean: cleanRun.report,
      plans: reports,
      summary: {
        plans: all.length,
        passed: all.filter((p) => p.verdict === "pass").length,
        failed: all.filter((p) => p.verdict === "fail").length,
        errors: all.filter((p) => p.verdict === "error").length,
        durationMs: Math.round(performance.now() - t0),
      },
      grid: {
        kinds: [...(options.kinds ?? ["unavailable", "timeout"]), ...(options.chaosSeeds ? ["chaos"] : [])],
        positions: positions.map((p) => ({ step: p.step, occurrence: p.occurrence, ...(p.call !== undefined ? { call: p.call } : {}) })),
      },
    };
  } finally {
    control.close();
    await server?.close();
  }
}
