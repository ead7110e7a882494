import { nearestName } from "../shared/nearest-name.js";
import { parseDuration } from "../script/parse-duration.js";
import { codeNames } from "../shared/status-code.js";
import { createControlClient } from "../port/control-client.js";
import { ModelCallError } from "../port/model-port.js";
import { clientOptions, clientTarget, controlTokenOption, type ClientTarget } from "./client-target.js";
import { formatOptionsHelp, resolveOptions, UsageError, type OptionSpec } from "./options.js";
import { SessionExit, sessionActions } from "./session-actions.js";

const [addrOption, ...tlsOptions] = clientOptions("Server to control.");
const specs = [
  addrOption!,
  controlTokenOption,
  { name: "timeout", type: "string", arg: "DURATION", default: "10s", description: "How long to wait for the connection, and then for the answer." },
  { name: "json", type: "boolean", description: "Print the server's answer as JSON (protobuf field names, zeros included), for scripts." },
  {
    name: "allow-missing",
    type: "boolean",
    description: "verify: verify a session the server does not keep as one that made no calls (without it: NOT_FOUND, exit 3).",
  },
  ...tlsOptions,
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];

const width = Math.max(...Object.entries(sessionActions).map(([name, a]) => `${name} ${a.args.join(" ")}`.length));
const usage = `usage: modelstub session <command> [ARGS] [options]

Controls a running server's sessions through its ControlService.

commands:
${Object.entries(sessionActions)
  .map(([name, a]) => `  ${`${name} ${a.args.join(" ")}`.padEnd(width)}  ${a.about}`)
  .join("\n")}

Exit codes: 0 done, 1 bad arguments or an invalid script (then nothing was sent; its problems
are printed as \`modelstub validate\` prints them), 2 cannot connect, 3 the server answered with
an error (its message is printed: an unknown session to verify or delete is NOT_FOUND), 4 \`verify\`
found entries not used up. An unknown command exits 2.

${formatOptionsHelp(specs)}
`;

/**
 * Prints a usage error and where the usage is (the whole of it would bury the message); answers
 * 1, or `exit` (2 for an unknown command, as for every command of modelstub).
 */
function usageError(message: string, exit: number = SessionExit.usage): number {
  process.stderr.write(`modelstub session: ${message}\n(run \`modelstub session --help\` for the commands and options)\n`);
  return exit;
}

/** `modelstub session list|load|reset|verify|delete`. */
export async function session(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage);
    return SessionExit.ok;
  }
  if (name === undefined || name.startsWith("-")) return usageError("name a command: list, load, faults, reset, verify, watch or delete");
  const action = sessionActions[name];
  if (!action) {
    const near = nearestName(name, Object.keys(sessionActions));
    return usageError(`unknown command ${JSON.stringify(name)}${near ? `; did you mean ${JSON.stringify(near)}?` : ""}`, SessionExit.unknownCommand);
  }
  let parsed;
  try {
    parsed = resolveOptions(specs, rest);
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message);
    throw err;
  }
  const { options, positionals, sources } = parsed;
  if (options["help"]) {
    process.stdout.write(usage);
    return SessionExit.ok;
  }
  if (positionals.length !== action.args.length) {
    return usageError(
      `${name} takes ${action.args.length === 0 ? "no arguments" : action.args.join(" ")}, not ${positionals.length === 0 ? "none" : positionals.map((p) => JSON.stringify(p)).join(" ")}`,
    );
  }
  const timeoutMs = parseDuration(options["timeout"]);
  if (timeoutMs === undefined) return usageError(`--timeout must be a duration like 10s or 500ms, not ${JSON.stringify(options["timeout"])}`);
  const stop = await action.prepare?.(positionals);
  if (stop !== undefined) return stop;
  let target: ClientTarget;
  try {
    target = await clientTarget(options, sources["addr"] === "default");
  } catch (err) {
    process.stderr.write(`modelstub session: cannot read the certificate to trust: ${(err as Error).message}\n`);
    return SessionExit.usage;
  }
  const client = createControlClient(target.addr, { token: options["control-token"], credentials: target.creds, channelOptions: target.channelOptions });
  try {
    // Connecting first tells "no server there" (2) apart from an error the server answered (3).
    try {
      await client.ready(timeoutMs);
    } catch {
      process.stderr.write(`modelstub session ${name}: cannot connect to ${target.addr} within ${timeoutMs} ms\n`);
      return SessionExit.cannotConnect;
    }
    return await action.run({ client, args: positionals, timeoutMs, json: options["json"], allowMissing: options["allow-missing"] });
  } catch (err) {
    if (!(err instanceof ModelCallError)) throw err;
    // The server's own message, whole: for a refused script it lists the problems line by line.
    process.stderr.write(`modelstub session ${name}: the server answered ${codeNames[err.code] ?? err.code}: ${err.details}\n`);
    return SessionExit.rpcFailed;
  } finally {
    client.close();
  }
}
