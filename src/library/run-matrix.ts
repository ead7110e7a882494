import type { RunMatrixOptions as RunnerOptions } from "../matrix/run-matrix.js";
import type { MatrixReport } from "../matrix/report-types.js";
import { compileSource, type ScriptSource } from "./script-source.js";

/** runMatrix()'s options: the runner's, with the script as any source loadScript() takes. */
export type RunMatrixOptions = Omit<RunnerOptions, "script"> & { script: ScriptSource };

/**
 * Runs an executor (a separate process, any language) under every plan of a script's crash
 * matrix, as `modelstub matrix run` does (docs/faults.md, "Run the matrix"): the clean run
 * first, then each plan on a fresh session, `jobs` at a time, COMMAND killed and restarted at
 * crash plans. Resolves with the report (every plan's verdict and reasons); write it with the
 * JUnit or JSON lines writers, or read `summary`. Throws a ScriptError for an invalid script, and
 * rejects when the plans cannot be made or the server cannot be reached.
 */
export async function runMatrix(options: RunMatrixOptions): Promise<MatrixReport> {
  const script = compileSource(options.script);
  // The runner talks to a server over gRPC: loaded here, so importing modelstub loads no grpc-js.
  const { runMatrix: runOnScript } = await import("../matrix/run-matrix.js");
  return runOnScript({ ...options, script });
}
