import { nearestName } from "../shared/nearest-name.js";
import { maxDurationMs, parseDuration } from "../script/parse-duration.js";
import { parseArgs } from "node:util";

/** One option of a command: its flag, its environment variable of the same meaning, its default. */
export interface OptionSpec {
  /** The flag without dashes: `grpc` is `--grpc`. */
  name: string;
  /** The environment variable, like MODELSTUB_GRPC; flags win over it. */
  env?: string;
  type: "string" | "boolean";
  /** The default, documented in --help, and the reason for it in `description`. */
  default?: string;
  /** Allowed values, checked. */
  values?: readonly string[];
  /** Placeholder in --help, like HOST:PORT; options with `values` list them beside it. */
  arg?: string;
  description: string;
}

/** A usage error: the command prints it and exits 2. */
export class UsageError extends Error {}

/** Any command's resolved options: a flag's name to its value. */
export type ResolvedOptions = Readonly<Record<string, string | boolean | undefined>>;

/**
 * The value an option resolves to, from its spec: a boolean option is a boolean; a string option
 * is one of its `values` when it lists them, else a string; undefined unless it has a default. A
 * spec not written `as const` (its type either) may be any of them.
 */
export type OptionValue<S extends OptionSpec> = S["type"] extends "boolean"
  ? boolean
  : S["type"] extends "string"
    ? (S extends { values: readonly (infer V extends string)[] } ? V : string) | (S extends { default: string } ? never : undefined)
    : string | boolean | undefined;

/** The options a table of specs resolves to (written `as const`): each flag's name to its OptionValue. */
export type OptionsOf<Specs extends readonly OptionSpec[]> = { readonly [S in Specs[number] as S["name"]]: OptionValue<S> };

/** The names of a table's options. */
export type OptionName<Specs extends readonly OptionSpec[]> = Specs[number]["name"];

/** Where an option's value came from: a flag wins over its variable, which wins over the default. */
export type OptionSource = "flag" | "env" | "default";

/** The names of the string options of resolved `options`. */
type StringOptionName<O> = { [K in keyof O]: O[K] extends string | undefined ? K : never }[keyof O] & string;

const truthy = new Set(["1", "true", "yes", "on"]);

/**
 * Parses flags, then fills what is missing from the environment, then from defaults; one table
 * drives parsing, environment and help, so they cannot drift apart.
 */
export function resolveOptions<const Specs extends readonly OptionSpec[]>(
  specs: Specs,
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): { options: OptionsOf<Specs>; positionals: string[]; sources: Record<OptionName<Specs>, OptionSource> } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(specs.map((s) => [s.name, { type: s.type }])),
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const unknown = /^Unknown option '([^']+)'/.exec((err as Error).message);
    if (unknown)
      throw new UsageError(
        unknownOptionMessage(
          unknown[1]!,
          specs.map((s) => s.name),
        ),
      );
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/, ""));
  }
  const options: Record<string, string | boolean | undefined> = {};
  const sources: Record<string, OptionSource> = {};
  for (const s of specs) {
    let v: string | boolean | undefined = (parsed.values as ResolvedOptions)[s.name];
    let source: OptionSource = "flag";
    if (v === undefined && s.env && env[s.env] !== undefined && env[s.env] !== "") {
      const raw = env[s.env]!;
      v = s.type === "boolean" ? truthy.has(raw.toLowerCase()) : raw;
      source = "env";
    }
    if (v === undefined) {
      v = s.type === "boolean" ? s.default === "true" : s.default;
      source = "default";
    }
    sources[s.name] = source;
    if (typeof v === "string" && s.values && !s.values.includes(v)) {
      throw new UsageError(`--${s.name} must be one of ${s.values.join(", ")}, not ${JSON.stringify(v)}`);
    }
    options[s.name] = v;
  }
  // Each value was resolved from its spec above as OptionValue says: a boolean option to a boolean,
  // a string one to a string (one of its values when it lists them) or, without a default, undefined.
  return { options: options as OptionsOf<Specs>, positionals: parsed.positionals, sources };
}

/**
 * `unknown option --scrpt; did you mean --script?`: the closest known flag (nearestName, the
 * script checker's typo rule), so a slip costs no trip to --help. `names` are without dashes.
 */
export function unknownOptionMessage(flag: string, names: readonly string[]): string {
  const near = nearestName(flag.replace(/^-+/, ""), names);
  return near ? `unknown option ${flag}; did you mean --${near}?` : `unknown option ${flag} (see --help for the options)`;
}

/** The options part of --help, one block per option. */
export function formatOptionsHelp(specs: readonly OptionSpec[]): string {
  return specs
    .map((s) => {
      const flag = `--${s.name}${s.type === "string" ? ` ${s.arg ?? "VALUE"}` : ""}`;
      const extra = [s.values ? `one of ${s.values.join(", ")}` : "", s.env ? `env ${s.env}` : "", s.default !== undefined ? `default ${s.default}` : ""]
        .filter(Boolean)
        .join("; ");
      return `  ${flag}\n      ${s.description}${extra ? ` (${extra})` : ""}`;
    })
    .join("\n");
}

/** Reads a non-negative integer option (a number when it has a default), or throws a usage error naming it. */
export function intOption<O extends ResolvedOptions, K extends StringOptionName<O>>(options: O, name: K): number | Unset<O[K]>;
export function intOption(options: ResolvedOptions, name: string): number | undefined {
  const v = options[name];
  if (v === undefined || typeof v === "boolean") return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, not ${JSON.stringify(v)}`);
  return Number(v);
}

/** undefined when an option's value can be: it has no default. */
type Unset<V> = undefined extends V ? undefined : never;

/** How a duration option is checked: `example` in its error, and whether 0 is allowed. */
interface DurationRules {
  example: string;
  allowZero?: boolean;
}

/**
 * A duration option in ms (undefined when unset), like `10s` or `500ms`, at most 24 days: Node's
 * timers fire at once past 2^31-1 ms, so a longer one would act immediately.
 */
export function durationOption<O extends ResolvedOptions, K extends StringOptionName<O>>(options: O, name: K, rules: DurationRules): number | Unset<O[K]>;
export function durationOption(options: ResolvedOptions, name: string, { example, allowZero = true }: DurationRules): number | undefined {
  const raw = options[name];
  if (raw === undefined || typeof raw === "boolean") return undefined;
  const ms = parseDuration(raw);
  if (ms === undefined || (!allowZero && ms === 0)) throw new UsageError(`--${name} must be a duration like ${example}, not ${JSON.stringify(raw)}`);
  if (ms > maxDurationMs) throw new UsageError(`--${name} must be at most 24 days (34560m), not ${JSON.stringify(raw)}`);
  return ms;
}
