import { matrixKinds } from "../script/crash-matrix.js";
import type { OptionSpec } from "./options.js";

/** The options of `modelstub matrix run`, with their help text (matrix-run.ts resolves them). */
export const matrixRunSpecs = [
  { name: "from-episode", type: "string", arg: "FILE", description: "Take positions from this episode of a clean run instead of the runner's own clean run." },
  {
    name: "positions",
    type: "string",
    arg: "SPEC",
    description:
      "Fault these calls: STEP:N or STEP:N-M, comma-separated (`:N` is the main list). With --from-episode, picked among its calls. Default: every call of the clean run.",
  },
  {
    name: "kinds",
    type: "string",
    arg: "LIST",
    default: "unavailable,timeout",
    description: `Failure kinds, comma-separated: ${matrixKinds.join(", ")}. crash holds the call, SIGKILLs COMMAND and starts it again with MODELSTUB_RESTART=1.`,
  },
  { name: "pairs", type: "boolean", description: "Two faults per plan: every pair of two distinct positions, with a kind at each." },
  {
    name: "clean-positions",
    type: "boolean",
    description:
      "Occurrences count the clean run's calls (`count: clean`): a pair's second fault strikes the call at its clean-run position, not a retry of the first.",
  },
  {
    name: "chaos-seeds",
    type: "string",
    arg: "A..B",
    description:
      "Also one chaos plan per seed A to B, with the script's `faults.chaos` rates, errors, budget and scope when it has them (else errors and timeouts at 10% each, at most 2 faults).",
  },
  {
    name: "chaos-rates",
    type: "string",
    arg: "LIST",
    description:
      "With --chaos-seeds: the rates, KIND=RATE comma-separated (kinds error, timeout, hang, break, latency; 0 to 1, summing to at most 1), like error=0.2,hang=0.05.",
  },
  { name: "chaos-budget", type: "string", arg: "N", description: "With --chaos-seeds: at most N chaos faults per episode (0: no budget)." },
  {
    name: "sample",
    type: "string",
    arg: "N",
    description: "Run only N of the plans after the clean run, picked by --seed: the same matrix and seed give the same plans on any machine.",
  },
  { name: "seed", type: "string", arg: "S", default: "0", description: "With --sample: the sample's seed (a whole number)." },
  { name: "addr", type: "string", arg: "HOST:PORT", description: "Use this running server (serving SCRIPT) instead of serving SCRIPT here." },
  { name: "http-url", type: "string", arg: "URL", description: "With --addr: the server's HTTP base URL, given to COMMAND as MODELSTUB_HTTP_URL." },
  { name: "control-token", type: "string", arg: "TOKEN", env: "MODELSTUB_CONTROL_TOKEN", description: "With --addr: the server's control token." },
  {
    name: "clock",
    type: "string",
    arg: "CLOCK",
    values: ["real", "virtual"],
    default: "real",
    description: "The clock of the server served here. real: a crash plan's held call stays held until COMMAND is killed.",
  },
  { name: "jobs", type: "string", arg: "N", default: "1", description: "Plans run at once, each on its own session." },
  { name: "repeat", type: "string", arg: "N", default: "1", description: "Run each plan N times; the episodes must be byte-identical." },
  { name: "golden", type: "string", arg: "DIR", description: "Compare each plan's episode with DIR/<plan id>.episode.binpb." },
  { name: "update-golden", type: "boolean", description: "With --golden: write the golden episodes instead of comparing." },
  {
    name: "expect",
    type: "string",
    arg: "FILE",
    description: "Expectations by kind or plan id (YAML or JSON): {kinds: {KIND: {exit, final_reply, retry}}, plans: {ID: {...}}}.",
  },
  {
    name: "check-hook",
    type: "string",
    arg: "CMD",
    description: "Run CMD (with sh) after each plan, with the plan's environment and MODELSTUB_EPISODE (the episode's JSON file): exit 0 passes.",
  },
  { name: "junit", type: "string", arg: "FILE", description: "Write a JUnit XML report: one test case per plan." },
  { name: "jsonl", type: "string", arg: "FILE", description: "Write one JSON object per plan, one a line." },
  { name: "html", type: "string", arg: "FILE", description: "Write the HTML report." },
  {
    name: "out",
    type: "string",
    arg: "DIR",
    description: "Where episodes (DIR/episodes/<id>.json) and workdirs (DIR/work/) go. Default: a new temporary directory.",
  },
  { name: "timeout", type: "string", arg: "DURATION", default: "60s", description: "SIGKILL one start of COMMAND that runs longer (the plan fails)." },
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];
