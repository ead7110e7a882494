import { fromBinary } from "@bufbuild/protobuf";
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { episodeDifference } from "../engine/episode-difference.js";
import type { RunnerPlan } from "./matrix-plans.js";
import type { ReportReason } from "./report-types.js";
import { planEnv, type PlanRun, type PlanRunContext } from "./run-plan.js";

/*
 * The checks of a plan's run that reach outside the episode: the golden file (--golden) and
 * the user's check hook (--check-hook).
 */

/** The plan environment a check hook gets besides COMMAND's: the episode's files. */
export function hookEnv(ctx: PlanRunContext, plan: RunnerPlan, session: string, workdir: string, episodePath: string): NodeJS.ProcessEnv {
  return { ...planEnv(ctx, plan, session, workdir), MODELSTUB_EPISODE: episodePath };
}

/** Runs the check hook with `sh -c`; resolves with its exit code and the tail of its output. */
export function runHook(hook: string, env: NodeJS.ProcessEnv, cwd: string | undefined): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", hook], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const keep = (b: Buffer) => (out = (out + b.toString("utf8")).slice(-8192));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (err) => resolve({ code: null, output: err.message }));
    child.on("close", (code) => resolve({ code, output: out }));
  });
}

/** Compares with the golden episode, or writes it; a reason when they differ or it is missing. */
export async function checkGolden(dir: string, id: string, run: PlanRun, update: boolean): Promise<ReportReason | undefined> {
  const file = join(dir, `${id}.episode.binpb`);
  if (update) {
    await mkdir(dir, { recursive: true });
    await writeFile(file, run.bytes);
    return undefined;
  }
  let golden: Uint8Array;
  try {
    golden = await readFile(file);
  } catch {
    return { code: "golden", message: `no golden episode ${file}: write it with --update-golden` };
  }
  if (Buffer.compare(Buffer.from(golden), Buffer.from(run.bytes)) === 0) return undefined;
  const diff = episodeDifference(fromBinary(EpisodeSchema, golden), run.episode) ?? "the bytes differ, every field is equal (unknown fields or encoding)";
  return { code: "golden", message: `the episode differs from the golden ${file}`, detail: `golden vs this run: ${diff}` };
}
