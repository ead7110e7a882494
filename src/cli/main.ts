import { nearestName } from "../shared/nearest-name.js";
import { packageVersion } from "./version.js";

// Commands load on demand: `serve` must reach SERVING fast, so it never pays for the others.
const commands: Record<string, { run: (argv: string[]) => Promise<number>; about: string }> = {
  serve: { run: async (a) => (await import("./serve.js")).serve(a), about: "serve a script over gRPC (the built-in default script without --script)" },
  validate: { run: async (a) => (await import("./validate.js")).validate(a), about: "check script files; exit 0 when all are valid, 1 otherwise" },
  schema: { run: async (a) => (await import("./schema.js")).schema(a), about: "print the JSON Schema of the script format" },
  episode: { run: async (a) => (await import("./episode.js")).episode(a), about: "print a recorded episode as JSON, or compare two episodes" },
  matrix: {
    run: async (a) => (await import("./matrix.js")).matrix(a),
    about: "print a script's crash matrix: one fault plan per call position and failure kind",
  },
  record: {
    run: async (a) => (await import("./record.js")).record(a),
    about: "record a real model (OpenAI-compatible HTTP or gRPC) into a script that replays it",
  },
  script: { run: async (a) => (await import("./script.js")).script(a), about: "script from-episode FILE: write a script that reproduces a recorded episode" },
  health: {
    run: async (a) => (await import("./health.js")).health(a),
    about: "probe a server's health (exit 0 serving, 2 no connection, 3 RPC failed, 4 not serving)",
  },
  session: { run: async (a) => (await import("./session.js")).session(a), about: "list, load, reset, verify or delete a running server's sessions" },
};

/** Registers a command (later layers add theirs: health, ...). */
export function addCommand(name: string, run: (argv: string[]) => Promise<number>, about: string): void {
  commands[name] = { run, about };
}

function help(): string {
  const width = Math.max(...Object.keys(commands).map((k) => k.length));
  return `usage: modelstub <command> [options]

A deterministic, scripted stand-in for a language model, served over gRPC.

commands:
${Object.entries(commands)
  .map(([k, c]) => `  ${k.padEnd(width)}  ${c.about}`)
  .join("\n")}

Run \`modelstub <command> --help\` for a command's options, \`modelstub --version\` for the version.
`;
}

/**
 * Whether --version is among the flags: before a `--`, which ends them. Any command takes it, so
 * `modelstub serve --grpc ... --version` answers the version of the very command line's binary.
 */
function asksVersion(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--version");
}

/** The CLI entry point: returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (asksVersion(argv)) {
    process.stdout.write(`modelstub ${packageVersion()}\n`);
    return 0;
  }
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(help());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    // A near miss gets its correction alone: the full help would bury it.
    const near = nearestName(name, Object.keys(commands));
    if (near) process.stderr.write(`modelstub: unknown command ${JSON.stringify(name)}; did you mean ${JSON.stringify(near)}?\n`);
    else process.stderr.write(`modelstub: unknown command ${JSON.stringify(name)}\n\n${help()}`);
    return 2;
  }
  return command.run(rest);
}
