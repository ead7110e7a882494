import { scriptFromEpisode } from "../script/episode-to-script.js";
import { loadScriptText } from "../script/load-script.js";
import { ScriptError } from "../script/script-error.js";
import { writeScriptFile } from "../script/write-script-file.js";
import { readEpisodeFile } from "./episode.js";
import type { MatchKind } from "../script/request-match-of.js";
import { formatOptionsHelp, resolveOptions, UsageError, type OptionSpec } from "./options.js";

const specs = [
  { name: "out", type: "string", arg: "FILE", description: "Write the script to FILE (atomically) instead of stdout." },
  { name: "strict", type: "boolean", description: "Exit 1 when the script cannot reproduce the episode byte for byte (it is written all the same)." },
  {
    name: "match",
    type: "string",
    arg: "KIND",
    values: ["readable", "digest", "none"],
    default: "readable",
    description:
      "What each entry keeps of the request it answered, as `request:`, which a replay holds requests to: readable (the last user text, the tool results since the last assistant turn, the tools offered), digest (sha256 of the canonical request), or none (order only).",
  },
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];

const usage = `usage: modelstub script from-episode FILE [--out FILE] [--strict] [--match KIND]

Writes a script that reproduces a recorded episode (FILE: .binpb, or .json as \`modelstub episode\`
prints it, from any front): served, with the episode's requests sent again in order in a session
of the same name (and the same deadlines for calls the caller cut off), it records the same
episode bytes. Replies, tool calls and their ids, finish reasons, usage, stream chunk counts,
failures (status and trailers, timeouts, hangs, stream breaks) and declared latency all carry
over. What cannot is printed on stderr, one line per problem, and noted in the script above its
entry. Exit codes: 0 written, 1 not exact with --strict, or the episode could not be read, 2 bad
arguments.

${formatOptionsHelp(specs)}
`;

async function fromEpisode(file: string, out: string | undefined, strict: boolean, match: MatchKind): Promise<number> {
  let episode;
  try {
    episode = (await readEpisodeFile(file)).episode;
  } catch (err) {
    process.stderr.write(`modelstub script: cannot read the episode ${file}: ${(err as Error).message}\n`);
    return 1;
  }
  if (episode.calls.length === 0) {
    process.stderr.write(`modelstub script: the episode ${file} has no calls: there is nothing to script\n`);
    return 1;
  }
  const made = scriptFromEpisode(episode, file, match);
  try {
    loadScriptText(made.text, out ?? "script.yaml");
  } catch (err) {
    // A text the script language cannot hold (a {{ in a reply) is among the problems already.
    if (!(err instanceof ScriptError)) throw err;
    if (made.problems.length === 0) made.problems.push(`the script does not load: ${err.message}`);
  }
  if (out !== undefined) {
    try {
      await writeScriptFile(out, made.text);
    } catch (err) {
      process.stderr.write(`modelstub script: ${(err as Error).message}\n`);
      return 1;
    }
  } else process.stdout.write(made.text);
  for (const p of made.problems) process.stderr.write(`modelstub script: not exact: ${p}\n`);
  if (out !== undefined) {
    const calls = `${episode.calls.length} call${episode.calls.length === 1 ? "" : "s"}`;
    process.stderr.write(
      `modelstub script: wrote ${out}: ${calls} of session "${episode.session}"${made.problems.length > 0 ? `, ${made.problems.length} not exact` : ", reproduced exactly"}\n`,
    );
  }
  return strict && made.problems.length > 0 ? 1 : 0;
}

/** `modelstub script from-episode FILE`: an episode as a script that reproduces it. */
export async function script(argv: string[]): Promise<number> {
  try {
    const [sub, ...rest] = argv;
    if (sub === undefined || sub === "--help" || sub === "-h") {
      process.stdout.write(usage);
      return sub === undefined ? 2 : 0;
    }
    if (sub !== "from-episode") throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; the one subcommand is from-episode`);
    const { options, positionals } = resolveOptions(specs, rest);
    if (options["help"]) {
      process.stdout.write(usage);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "give the episode file" : `give one episode file, not ${positionals.length}`);
    return await fromEpisode(positionals[0]!, options["out"], options["strict"], options["match"]);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub script: ${err.message}\n\n${usage}`);
      return 2;
    }
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code === "string") {
      process.stderr.write(`modelstub script: ${e.message}\n`);
      return 1;
    }
    throw err;
  }
}
