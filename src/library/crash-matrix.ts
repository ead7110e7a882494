import { fromBinary } from "@bufbuild/protobuf";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import {
  matrixPlans,
  matrixSize,
  parsePositions,
  positionsFromEpisode,
  positionsFromScript,
  selectPositions,
  unknownPositionSteps,
  type MatrixKind,
  type MatrixPlan,
  type MatrixPosition,
} from "../script/crash-matrix.js";
import type { CompiledScript } from "../script/compiled-script.js";
import { compileSource, type ScriptSource } from "./script-source.js";

export type { MatrixKind, MatrixPlan, MatrixPosition };

/** What crashMatrix() crosses: positions (by default every call the script answers) and kinds. */
export interface CrashMatrixOptions {
  /**
   * The calls to fault: positions, or a text like `plan:1-3,act:2,:1` (`:1` is the main list's
   * first call). With `episode`, picked among its calls (an error names one it has not). Default:
   * the calls of `episode` when given, else every call the script answers.
   */
  positions?: readonly MatrixPosition[] | string;
  /** An episode of a clean run (decoded, or its `.binpb` bytes): one position per recorded call. */
  episode?: Episode | Uint8Array;
  /** Failure kinds, crossed with every position (default `["unavailable", "timeout"]`). */
  kinds?: readonly MatrixKind[];
  /** Two faults per plan, at every pair of two distinct positions, in place of one. */
  pairs?: boolean;
  /**
   * Occurrences count the clean run's calls (`count: clean` on every rule): with pairs, the
   * second fault strikes the call at its clean-run position, not a retry the first one caused.
   */
  cleanPositions?: boolean;
}

/**
 * One position per call of a recorded episode, in call order: its step, which call of that step
 * it was (occurrence), its sequence and its method.
 *
 * @param episode a decoded Episode, or its deterministic bytes (`.binpb`, ExportEpisode)
 */
export function matrixPositions(episode: Episode | Uint8Array): MatrixPosition[] {
  return positionsFromEpisode(episode instanceof Uint8Array ? fromBinary(EpisodeSchema, episode) : episode);
}

function resolve(
  script: CompiledScript,
  options: CrashMatrixOptions,
): { positions: readonly MatrixPosition[]; kinds: readonly MatrixKind[]; pairs: boolean; cleanPositions: boolean } {
  const given = typeof options.positions === "string" ? parsePositions(options.positions) : options.positions;
  const recorded = options.episode !== undefined ? matrixPositions(options.episode) : undefined;
  // Both: the positions are picked among the episode's calls, which give their methods.
  const positions = given && recorded ? selectPositions(given, recorded) : (given ?? recorded ?? positionsFromScript(script));
  const unknown = unknownPositionSteps(positions, script);
  if (unknown.length > 0) throw new Error(`crashMatrix: ${unknown.join("; ")}`);
  return { positions, kinds: options.kinds ?? ["unavailable", "timeout"], pairs: options.pairs === true, cleanPositions: options.cleanPositions === true };
}

/**
 * The crash matrix of a script: one fault plan per call position crossed with each failure kind
 * (break and drop only at streamed calls, when the method is known), or with `pairs` one plan per
 * two faults at two distinct positions. Each plan has a stable `id` (`plan.2.unavailable-1a2b3c4d`,
 * also the plan's `name`), a `name` in words, and the `plan` itself, ready to load into a session
 * (SetFaultPlan, `modelstub session faults`) or to write as a plan file. A harness loops: for each plan, load it into a fresh
 * session, run the executor with that session, fetch the episode, assert.
 *
 * Throws a ScriptError when the script is invalid, and an Error when a position names a step the
 * script does not have (such a plan would never strike), is given twice, or a kind is unknown.
 *
 * @param script the script the run uses: compiled, or any source loadScript() takes
 * @param options positions (or an episode of a clean run), kinds, pairs
 */
export function crashMatrix(script: CompiledScript | ScriptSource, options: CrashMatrixOptions = {}): MatrixPlan[] {
  return matrixPlans(resolve(compileSource(script), options));
}

/** How many plans crashMatrix(script, options) makes, without making them (pairs grow fast). */
export function crashMatrixSize(script: CompiledScript | ScriptSource, options: CrashMatrixOptions = {}): number {
  return matrixSize(resolve(compileSource(script), options));
}
