import { create, toJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { readFile } from "node:fs/promises";
import {
  DeleteSessionResponseSchema,
  ListSessionsResponseSchema,
  LoadScriptResponseSchema,
  ResetSessionResponseSchema,
  SetFaultPlanResponseSchema,
  VerifySessionResponseSchema,
  WatchSessionResponseSchema,
} from "../../gen/modelstub/v1/control_pb.js";
import type { ControlClient } from "../port/control-client.js";
import { checkPlanFile, checkScriptFile } from "./validate.js";

/** The exit codes of `modelstub session`, health's where they mean the same. */
export const SessionExit = {
  ok: 0,
  /** Bad arguments, or a script that is invalid here (nothing was sent). */
  usage: 1,
  cannotConnect: 2,
  /** An unknown command, as `modelstub frobnicate` (docs/cli.md's table of exit codes). */
  unknownCommand: 2,
  /** The server answered the call with an error status. */
  rpcFailed: 3,
  /** `verify`: the server answered, and the session's script was not used up. */
  unsatisfied: 4,
} as const;

/** What an action needs: the connected client, its arguments, the call deadline, --json. */
export interface ActionContext {
  client: ControlClient;
  args: string[];
  timeoutMs: number;
  json: boolean;
  /** --allow-missing: verify a session the server does not keep as one that made no calls. */
  allowMissing: boolean;
}

/** One subcommand: its positional arguments, its one-line summary, and what it does. */
export interface SessionAction {
  args: string[];
  about: string;
  /** Runs before connecting; a number is the exit code to stop with (nothing is sent). */
  prepare?(args: string[]): Promise<number | undefined>;
  run(ctx: ActionContext): Promise<number>;
}

/** Prints a response as protobuf JSON (field names as in the .proto, zeros included): --json. */
function printJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): void {
  process.stdout.write(`${toJsonString(schema, message, { prettySpaces: 2, useProtoFieldName: true, alwaysEmitImplicit: true })}\n`);
}

/** Left-aligned columns, two spaces apart: readable without a terminal library. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return `${rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n")}\n`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The subcommands of `modelstub session`. */
export const sessionActions: Record<string, SessionAction> = {
  list: {
    args: [],
    about: "print the server's sessions: name, calls recorded, calls running, script",
    async run({ client, timeoutMs, json }) {
      const sessions = await client.listSessions({ timeoutMs });
      if (json) printJson(ListSessionsResponseSchema, create(ListSessionsResponseSchema, { sessions }));
      else if (sessions.length === 0) process.stdout.write("no sessions\n");
      else
        process.stdout.write(
          table([["NAME", "CALLS", "RUNNING", "SCRIPT"], ...sessions.map((s) => [s.name, String(s.calls), String(s.running), s.scriptName])]),
        );
      return SessionExit.ok;
    },
  },
  load: {
    args: ["SESSION", "FILE"],
    about: "check FILE as `validate` does, then load it as SESSION's script (LoadScript)",
    // The same check as `modelstub validate FILE`, with its output: an invalid script is never sent.
    prepare: async ([, file]) => ((await checkScriptFile(file!)) ? undefined : SessionExit.usage),
    async run({ client, args: [session, file], timeoutMs, json }) {
      const script = await readFile(file!, "utf8");
      // The file's name as given: a refusal from the server names it as `validate` would.
      const res = await client.call("LoadScript", { session, script, sourceName: file }, { timeoutMs });
      if (json) printJson(LoadScriptResponseSchema, res);
      else process.stdout.write(`session ${JSON.stringify(session)}: loaded ${file} (${plural(res.entries, "entry", "entries")})\n`);
      return SessionExit.ok;
    },
  },
  faults: {
    args: ["SESSION", "FILE"],
    about: "check the fault plan FILE, then set it on SESSION, starting it afresh (SetFaultPlan)",
    // Checked here first (syntax, fields), as `load` checks a script; the server checks its steps.
    prepare: async ([, file]) => ((await checkPlanFile(file!)) ? undefined : SessionExit.usage),
    async run({ client, args: [session, file], timeoutMs, json }) {
      const plan = await readFile(file!, "utf8");
      const res = await client.call("SetFaultPlan", { session, plan, sourceName: file }, { timeoutMs });
      if (json) printJson(SetFaultPlanResponseSchema, res);
      else {
        const what = res.plan?.chaosSeed !== undefined ? `chaos, seed ${res.plan.chaosSeed}` : plural(res.rules, "rule", "rules");
        process.stdout.write(
          `session ${JSON.stringify(session)}: fault plan ${JSON.stringify(res.plan?.name ?? "")} set (${what}; digest ${res.plan?.digest.slice(0, 12)}); the episode it closed holds ${plural(res.closedCalls, "call", "calls")}\n`,
        );
      }
      return SessionExit.ok;
    },
  },
  reset: {
    args: ["SESSION"],
    about: "rewind SESSION's script and start a new episode, writing the old one to --record-dir",
    async run({ client, args: [session], timeoutMs, json }) {
      const res = await client.call("ResetSession", { session }, { timeoutMs });
      if (json) printJson(ResetSessionResponseSchema, res);
      else process.stdout.write(`session ${JSON.stringify(session)}: reset (the episode it closed holds ${plural(res.calls, "call", "calls")})\n`);
      return SessionExit.ok;
    },
  },
  verify: {
    args: ["SESSION"],
    about: "check that SESSION used every limited script entry and its fault plan's rules all struck; exit 4 listing what did not",
    async run({ client, args: [session], timeoutMs, json, allowMissing }) {
      const res = await client.call("VerifySession", { session, allowMissing }, { timeoutMs });
      if (json) printJson(VerifySessionResponseSchema, res);
      else if (res.satisfied) process.stdout.write(`session ${JSON.stringify(session)}: satisfied (${res.message})\n`);
      else {
        const why = [
          res.unused.length > 0 ? `${plural(res.unused.length, "scripted entry was", "scripted entries were")} not used up` : "",
          res.unstruck.length > 0 ? `${plural(res.unstruck.length, "fault rule", "fault rules")} never struck` : "",
        ];
        process.stdout.write(`session ${JSON.stringify(session)}: not satisfied: ${why.filter(Boolean).join("; ")}\n`);
        // The summary starts with the entry's place in the script (`entries[0]: reply "one"`).
        if (res.unused.length > 0)
          process.stdout.write(
            table([["LEFT", "ENTRY"], ...res.unused.map((u) => [u.remaining === 0 ? "unlimited" : String(u.remaining), u.summary || u.entry])]),
          );
        if (res.unstruck.length > 0) process.stdout.write(table([["RULE", "NEVER STRUCK AT"], ...res.unstruck.map((u) => [u.rule, u.at])]));
      }
      return res.satisfied ? SessionExit.ok : SessionExit.unsatisfied;
    },
  },
  watch: {
    args: ["SESSION"],
    about: "print SESSION's call events as JSON lines (started, ended) until interrupted",
    async run({ client, args: [session] }) {
      // One JSON object a line, protobuf JSON field names: a harness in any language reads it.
      const print = (m: Parameters<Parameters<ControlClient["watchSession"]>[1]>[0]) =>
        process.stdout.write(`${toJsonString(WatchSessionResponseSchema, m, { useProtoFieldName: true })}\n`);
      const watch = await client.watchSession(session!, print);
      process.stderr.write(`modelstub session watch: watching session ${JSON.stringify(session)} (Ctrl-C ends)\n`);
      const stop = () => watch.close();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      try {
        await watch.closed;
      } finally {
        process.removeListener("SIGINT", stop);
        process.removeListener("SIGTERM", stop);
      }
      return SessionExit.ok;
    },
  },
  delete: {
    args: ["SESSION"],
    about: "close SESSION's episode (written to --record-dir) and forget the session",
    async run({ client, args: [session], timeoutMs, json }) {
      const res = await client.call("DeleteSession", { session }, { timeoutMs });
      if (json) printJson(DeleteSessionResponseSchema, res);
      else process.stdout.write(`session ${JSON.stringify(session)}: deleted (its episode holds ${plural(res.calls, "call", "calls")})\n`);
      return SessionExit.ok;
    },
  },
};
