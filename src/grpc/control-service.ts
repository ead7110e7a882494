import { create } from "@bufbuild/protobuf";
import type { sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import {
  GetEpisodeResponseSchema,
  ListSessionsResponseSchema,
  LoadScriptResponseSchema,
  ResetSessionResponseSchema,
  SessionInfoSchema,
  UnusedEntrySchema,
  VerifySessionResponseSchema,
} from "../../gen/modelstub/v1/control_pb.js";
import { checkSessionName, type Stub } from "../engine/create-stub.js";
import { loadScriptText } from "../engine/load-script.js";
import { ScriptError } from "../engine/script-error.js";
import { Code } from "../engine/status-code.js";
import { timingSafeEqual } from "node:crypto";
import { metadataText, statusError } from "./call-context.js";

type Handler = (request: { session?: string } & Record<string, unknown>) => unknown;

/** Constant-time comparison: a token check must not tell by its timing how much was right. */
function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The status a failed control call answers with. */
function statusOfError(err: unknown): { code: number; details: string } {
  if (err instanceof ScriptError) return { code: Code.INVALID_ARGUMENT, details: err.message };
  const status = (err as { status?: { code: number; message: string } }).status;
  if (status) return { code: status.code, details: status.message };
  return { code: Code.INTERNAL, details: `modelstub internal error: ${err instanceof Error ? err.message : String(err)}` };
}

/**
 * Wraps a control handler: the token, then the session check, every throw and rejection a
 * status. A handler may return a promise (reset and reload answer once the closed episode is
 * recorded); grpc-js would lose its rejection, so it is caught here.
 */
function unary(run: Handler, token: string | undefined) {
  return (call: ServerUnaryCall<Record<string, unknown>, unknown>, callback: sendUnaryData<unknown>) => {
    try {
      if (token !== undefined) {
        const auth = metadataText(call.metadata, "authorization");
        if (!auth) return callback({ code: Code.UNAUTHENTICATED, details: "ControlService needs metadata `authorization: Bearer <token>` (the server's --control-token)" });
        if (!sameToken(auth.replace(/^Bearer\s+/i, ""), token)) return callback({ code: Code.UNAUTHENTICATED, details: "wrong control token" });
      }
      const session = (call.request["session"] as string | undefined) || "default";
      const bad = checkSessionName(session);
      if (bad) return callback(statusError(bad));
      const result = run({ ...call.request, session });
      if (result instanceof Promise) result.then((r) => callback(null, r), (err: unknown) => callback(statusOfError(err)));
      else callback(null, result);
    } catch (err) {
      callback(statusOfError(err));
    }
  };
}

/**
 * ControlService handlers over a stub. An empty session field means `default`. With a `token`,
 * every call must carry `authorization: Bearer <token>`, else UNAUTHENTICATED.
 */
export function controlServiceHandlers(stub: Stub, token?: string): UntypedServiceImplementation {
  return {
    LoadScript: unary((r) => {
      const session = r.session!;
      // Compile first: an invalid script throws here and the session keeps its script.
      const script = loadScriptText(String(r["script"] ?? ""), String(r["sourceName"] || `<script for session ${session}>`));
      // Answers once the closed episode is recorded (written to --record-dir, when set).
      return stub.loadScript(session, script).then(() => create(LoadScriptResponseSchema, { entries: script.entryCount }));
    }, token),
    GetEpisode: unary((r) => {
      const episode = stub.episode(r.session!);
      return create(GetEpisodeResponseSchema, { episode, episodeBinpb: stub.episodeBytes(r.session!) });
    }, token),
    ResetSession: unary(async (r) => create(ResetSessionResponseSchema, { calls: await stub.reset(r.session!) }), token),
    VerifySession: unary((r) => {
      const v = stub.verify(r.session!);
      return create(VerifySessionResponseSchema, {
        satisfied: v.satisfied,
        message: v.message,
        unused: v.unused.map((u) => create(UnusedEntrySchema, { entry: u.entry, remaining: Number.isFinite(u.remaining) ? u.remaining : 0, summary: u.summary })),
      });
    }, token),
    ListSessions: unary(() =>
      create(ListSessionsResponseSchema, {
        sessions: stub.sessions().map((s) => create(SessionInfoSchema, { name: s.name, calls: s.calls, scriptName: s.scriptName })),
      }),
      token,
    ),
  };
}
