import { fromBinary } from "@bufbuild/protobuf";
import { mkdir, rm } from "node:fs/promises";
import { WatchEventKind, type WatchSessionResponse } from "../../gen/modelstub/v1/control_pb.js";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { canonicalJson } from "../script/compile-fault-plan.js";
import type { ControlClient } from "../port/control-client.js";
import type { RunnerPlan } from "./matrix-plans.js";
import { startCommand, type CommandExit } from "./run-command.js";

/** Where and how to run COMMAND for one plan. */
export interface PlanRunContext {
  control: ControlClient;
  command: readonly string[];
  grpcAddress: string;
  httpUrl: string | undefined;
  /** COMMAND's working directory (default: the runner's). */
  cwd: string | undefined;
  /** Extra environment for COMMAND, over the runner's own. */
  env: NodeJS.ProcessEnv;
  /** SIGKILL COMMAND when one start runs longer. */
  timeoutMs: number;
}

/** One start of COMMAND within a plan's run. */
export interface PlanStart extends CommandExit {
  restart: number;
  /** True when the runner killed it at a crash rule. */
  crashed: boolean;
}

/** One repetition of one plan: every start of COMMAND, the episode, which start made each call. */
export interface PlanRun {
  starts: PlanStart[];
  episode: Episode;
  bytes: Uint8Array;
  /** Per call sequence (from 1), the start (MODELSTUB_RESTART) that made it. */
  restartOf: Map<number, number>;
  /** Crash rules whose call never arrived. */
  crashesMissed: string[];
}

/** A session name for a plan: `m-` and the id when it fits the session name rule, else a digest. */
export function sessionFor(id: string, prefix: string): string {
  const name = `${prefix}${id}`.replace(/[^A-Za-z0-9._-]/g, "_");
  return name.length <= 128 ? name : `${prefix}${name.slice(prefix.length, prefix.length + 100)}-${hashText(id)}`;
}

function hashText(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/**
 * Runs one repetition of `plan` in `session`: watches the session (WatchSession), sets the plan
 * (a fresh episode), starts COMMAND with the MODELSTUB_* environment, and, when a crash rule's
 * held call arrives, SIGKILLs COMMAND's process group, waits until the server has recorded the
 * cut-off call, and starts COMMAND again with MODELSTUB_RESTART one higher (same workdir). Once
 * COMMAND exits on its own and no call of the session runs, fetches the episode.
 */
export async function runPlan(ctx: PlanRunContext, plan: RunnerPlan, session: string, workdir: string): Promise<PlanRun> {
  await rm(workdir, { recursive: true, force: true });
  await mkdir(workdir, { recursive: true });
  const restartOf = new Map<number, number>();
  let restart = 0;
  let running = 0;
  let idle: (() => void) | undefined;
  const pendingCrashes = new Set(plan.crashRules);
  let crashNow: (() => void) | undefined;
  const onEvent = (e: WatchSessionResponse) => {
    const sequence = Number(e.sequence);
    if (e.kind === WatchEventKind.CALL_STARTED) {
      running++;
      restartOf.set(sequence, restart);
      const rule = e.fault?.rule;
      if (rule !== undefined && pendingCrashes.delete(rule)) crashNow?.();
    } else if (e.kind === WatchEventKind.CALL_ENDED) {
      running--;
      if (running === 0) idle?.();
    }
  };
  // Watching before the plan is set: the first call of the new episode cannot be missed.
  const watch = await ctx.control.watchSession(session, onEvent);
  // Bounded by --timeout, and by the watch's end: a server gone cannot leave the runner waiting.
  const untilIdle = () => {
    if (running === 0) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      new Promise<void>((resolve) => (idle = resolve)),
      watch.closed.catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ctx.timeoutMs))),
    ]).finally(() => clearTimeout(timer));
  };
  const starts: PlanStart[] = [];
  try {
    await ctx.control.call("SetFaultPlan", { session, plan: canonicalJson(plan.plan), sourceName: `${plan.id}.json` });
    for (;;) {
      const env: NodeJS.ProcessEnv = {
        ...planEnv(ctx, plan, session, workdir),
        MODELSTUB_PLAN_JSON: canonicalJson(plan.plan),
        MODELSTUB_RESTART: String(restart),
      };
      const started = startCommand(ctx.command, env, ctx.cwd, ctx.timeoutMs);
      let crashed = false;
      crashNow = () => {
        crashed = true;
        started.kill();
      };
      const exit = await started.exited;
      crashNow = undefined;
      starts.push({ ...exit, restart, crashed });
      // The killed process's held call ends (CANCELLED) once the server sees its connection go:
      // recorded before the next start, so the episode's timeline never depends on a race.
      await untilIdle();
      if (!crashed || exit.timedOut) break;
      restart++;
    }
  } finally {
    watch.close();
  }
  const { bytes } = await ctx.control.exportEpisode(session);
  return { starts, episode: fromBinary(EpisodeSchema, bytes), bytes, restartOf, crashesMissed: [...pendingCrashes] };
}

/** What COMMAND and a check hook both learn of a plan's run: the server, the session, the plan, the workdir. */
export function planEnv(ctx: PlanRunContext, plan: RunnerPlan, session: string, workdir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...ctx.env,
    MODELSTUB_GRPC_ADDR: ctx.grpcAddress,
    ...(ctx.httpUrl ? { MODELSTUB_HTTP_URL: ctx.httpUrl } : {}),
    MODELSTUB_SESSION: session,
    MODELSTUB_PLAN_ID: plan.id,
    MODELSTUB_PLAN_NAME: plan.name,
    MODELSTUB_WORKDIR: workdir,
  };
}
