import type { LogFormat, LogLevel } from "../log/create-logger.js";
import { serveOptions, type ServeOptionSources, type ServeOptions } from "./serve-options.js";

// What the options of `modelstub serve` say about its log: level, format, and the debug line
// that lists the configuration.

/**
 * --quiet is --log-level warn, unless --log-level is given as a flag: a flag wins over any
 * variable, so MODELSTUB_QUIET=1 in a container's environment cannot hide an explicit flag.
 */
export function logLevelOf(options: ServeOptions, sources: ServeOptionSources): LogLevel {
  if (options["quiet"] && sources["log-level"] !== "flag") return "warn";
  return options["log-level"];
}

/** The resolved options and where each came from, for the debug log; the control token is never logged. */
export function configurationFields(options: ServeOptions, sources: ServeOptionSources): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const fromFlags: string[] = [];
  const fromEnv: string[] = [];
  for (const o of serveOptions) {
    if (o.name === "help") continue;
    const v = options[o.name];
    fields[o.name] = o.name === "control-token" && v ? "(set)" : v;
    if (sources[o.name] === "flag") fromFlags.push(o.name);
    if (sources[o.name] === "env" && "env" in o) fromEnv.push(o.env);
  }
  return { ...fields, from_flags: fromFlags, from_env: fromEnv };
}

/** --log-format: auto is text on a terminal, JSON lines otherwise. */
export function logFormatOf(options: ServeOptions): LogFormat {
  const f = options["log-format"];
  if (f === "json" || f === "text") return f;
  return process.stderr.isTTY ? "text" : "json";
}
