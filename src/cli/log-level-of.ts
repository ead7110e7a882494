import type { LogFormat, LogLevel } from "../log/create-logger.js";
import type { OptionSource, ResolvedOptions } from "./options.js";
import { serveOptions } from "./serve-options.js";

// What the options of `modelstub serve` say about its log: level, format, and the debug line
// that lists the configuration.

/**
 * --quiet is --log-level warn, unless --log-level is given as a flag: a flag wins over any
 * variable, so MODELSTUB_QUIET=1 in a container's environment cannot hide an explicit flag.
 */
export function logLevelOf(options: ResolvedOptions, sources: Record<string, OptionSource>): LogLevel {
  if (options["quiet"] && sources["log-level"] !== "flag") return "warn";
  return options["log-level"] as LogLevel;
}

/** The resolved options and where each came from, for the debug log; the control token is never logged. */
export function configurationFields(options: ResolvedOptions, sources: Record<string, OptionSource>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const fromFlags: string[] = [];
  const fromEnv: string[] = [];
  for (const o of serveOptions) {
    if (o.name === "help") continue;
    const v = options[o.name];
    fields[o.name] = o.name === "control-token" && v ? "(set)" : v;
    if (sources[o.name] === "flag") fromFlags.push(o.name);
    if (sources[o.name] === "env") fromEnv.push(o.env!);
  }
  return { ...fields, from_flags: fromFlags, from_env: fromEnv };
}

/** --log-format: auto is text on a terminal, JSON lines otherwise. */
export function logFormatOf(options: ResolvedOptions): LogFormat {
  const f = options["log-format"];
  if (f === "json" || f === "text") return f;
  return process.stderr.isTTY ? "text" : "json";
}
