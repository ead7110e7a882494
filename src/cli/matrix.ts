import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { canonicalJson } from "../script/compile-fault-plan.js";
import {
  describeMatrixSize,
  eachMatrixPlan,
  matrixKinds,
  parsePositions,
  positionsFromEpisode,
  positionsFromScript,
  selectPositions,
  unknownPositionSteps,
  type MatrixKind,
  type MatrixOptions,
  type MatrixPosition,
} from "../script/crash-matrix.js";
import { nearestName } from "../shared/nearest-name.js";
import { readEpisodeFile } from "./episode.js";
import { formatOptionsHelp, resolveOptions, UsageError, type OptionSpec } from "./options.js";
import { checkScriptFile } from "./validate.js";

const specs = [
  {
    name: "from-episode",
    type: "string",
    arg: "FILE",
    description: "Fault the calls of this episode of a clean run (.binpb or .json, as `modelstub episode FILE` reads it), one position per call.",
  },
  {
    name: "positions",
    type: "string",
    arg: "SPEC",
    description:
      "Fault these calls: STEP:N or STEP:N-M, comma-separated (`:N` is the main list), like plan:1-3,act:2,:1. With --from-episode, picked among its calls. Default: every call the script answers.",
  },
  {
    name: "kinds",
    type: "string",
    arg: "LIST",
    default: "unavailable,timeout",
    description: `Failure kinds, comma-separated: ${matrixKinds.join(", ")} (break and drop only at streamed calls).`,
  },
  { name: "pairs", type: "boolean", description: "Two faults per plan: every pair of two distinct positions, with a kind at each." },
  {
    name: "clean-positions",
    type: "boolean",
    description:
      "Occurrences count the clean run's calls (`count: clean` on every rule): a pair's second fault strikes the call at its clean-run position, not a retry the first fault caused.",
  },
  { name: "out", type: "string", arg: "DIR", description: "Also write each plan as DIR/<id>.json (DIR is created)." },
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];

const usage = `usage: modelstub matrix SCRIPT [--from-episode FILE] [--positions SPEC] [--kinds LIST] [--pairs [--clean-positions]] [--out DIR]
       modelstub matrix run SCRIPT [options] -- COMMAND [ARGS...]   (modelstub matrix run --help)

Prints the crash matrix of SCRIPT: one fault plan per call position crossed with each failure
kind, as JSON lines {"id", "name", "plan"} on stdout, after their count on stderr. A harness
runs each plan: load it into a fresh session, run the executor with that session, fetch the
episode, assert. The script is checked as \`modelstub validate\` does. Exit codes: 0 printed,
1 bad arguments, an invalid script or an unreadable episode.

${formatOptionsHelp(specs)}
`;

function kindsOf(text: string): MatrixKind[] {
  const kinds = text.split(",").map((k) => k.trim());
  for (const k of kinds) {
    if ((matrixKinds as readonly string[]).includes(k)) continue;
    const near = nearestName(k, matrixKinds);
    throw new UsageError(
      `--kinds: unknown kind ${JSON.stringify(k)}${near ? `; did you mean ${JSON.stringify(near)}?` : ""} (kinds: ${matrixKinds.join(", ")})`,
    );
  }
  const twice = kinds.find((k, i) => kinds.indexOf(k) !== i);
  if (twice) throw new UsageError(`--kinds: ${twice} is given twice`);
  return kinds as MatrixKind[];
}

/** A problem with the script or the episode: printed alone, without the usage. */
class MatrixError extends Error {}

async function episodePositions(file: string): Promise<MatrixPosition[]> {
  try {
    return positionsFromEpisode((await readEpisodeFile(file)).episode);
  } catch (err) {
    throw new MatrixError(`cannot read the episode ${file}: ${(err as Error).message}`);
  }
}

/** Writes the plans' JSON lines (and files), in batches, so a large matrix never sits in memory. */
async function emit(options: MatrixOptions, out: string | undefined): Promise<void> {
  if (out !== undefined) await mkdir(out, { recursive: true });
  let batch: string[] = [];
  for (const { id, name, plan } of eachMatrixPlan(options)) {
    const json = canonicalJson(plan);
    batch.push(`{"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"plan":${json}}\n`);
    if (out !== undefined) await writeFile(join(out, `${id}.json`), `${JSON.stringify(JSON.parse(json), null, 2)}\n`);
    if (batch.length >= 1000) {
      process.stdout.write(batch.join(""));
      batch = [];
    }
  }
  if (batch.length > 0) process.stdout.write(batch.join(""));
}

/** `modelstub matrix SCRIPT`: the crash matrix's plans as JSON lines. */
export async function matrix(argv: string[]): Promise<number> {
  if (argv[0] === "run") return (await import("./matrix-run.js")).matrixRun(argv.slice(1));
  try {
    const { options, positionals } = resolveOptions(specs, argv);
    if (options["help"]) {
      process.stdout.write(usage);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "give the script file" : `give one script file, not ${positionals.length}`);
    const kinds = kindsOf(options["kinds"]);
    let given: MatrixPosition[] | undefined;
    if (typeof options["positions"] === "string") {
      try {
        given = parsePositions(options["positions"]);
      } catch (err) {
        throw new UsageError(`--positions: ${(err as Error).message}`);
      }
    }
    // Both: the positions are picked among the episode's calls (and take their methods).
    if (typeof options["from-episode"] === "string") {
      const recorded = await episodePositions(options["from-episode"]);
      try {
        given = given ? selectPositions(given, recorded) : recorded;
      } catch (err) {
        throw new MatrixError(`--positions with --from-episode: ${(err as Error).message}`);
      }
    }
    const script = await checkScriptFile(positionals[0]!);
    if (!script) return 1;
    const positions = given ?? positionsFromScript(script);
    const unknown = unknownPositionSteps(positions, script);
    if (unknown.length > 0) throw new MatrixError(`${unknown.join("\n")} (a plan there would never strike)`);
    const matrixOptions: MatrixOptions = { positions, kinds, pairs: options["pairs"], cleanPositions: options["clean-positions"] };
    process.stderr.write(`modelstub matrix: ${describeMatrixSize(matrixOptions)}\n`);
    await emit(matrixOptions, options["out"]);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub matrix: ${err.message}\n\n${usage}`);
      return 1;
    }
    const e = err as NodeJS.ErrnoException;
    if (err instanceof MatrixError || typeof e.code === "string") {
      process.stderr.write(`modelstub matrix: ${e.message}\n`);
      return 1;
    }
    throw err;
  }
}
