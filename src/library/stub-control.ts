import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { checkSessionName } from "../engine/check-session-name.js";
import type { Stub } from "../engine/create-stub.js";
import type { Verification } from "../engine/verify-session.js";
import { ModelCallError } from "../port/model-port.js";
import { compileSourceOffLoop, type ScriptSource } from "./script-source.js";
import { compilePlanSourceOffLoop, type FaultPlanSource } from "./fault-plan-source.js";

/** One session the server keeps, as ListSessions reports it. */
export interface SessionSummary {
  name: string;
  /** Calls recorded in its open episode. */
  calls: number;
  /** Calls running in it right now. */
  running: number;
  /** The name of the script it is served from. */
  scriptName: string;
}

/**
 * What ControlService does, called in process on the server's own engine: no channel, no
 * token, no message size limit. Session names follow the server's rule (1 to 128 of
 * `A-Z a-z 0-9 . _ -`); a bad one, like every refusal here, rejects (or throws) with a
 * ModelCallError carrying the status ControlService would answer.
 */
export interface StubControl {
  /**
   * Replaces a session's script and starts it afresh (its episode closes, as on reset).
   * Rejects with a ScriptError carrying the CLI's diagnostics when the script is not valid;
   * the session then keeps its script.
   * @param file the name diagnostics give the script (default `<script for session NAME>`)
   */
  loadScript(session: string, script: ScriptSource, file?: string): Promise<{ entries: number }>;
  /**
   * Sets the session's fault plan (docs/faults.md) and starts it afresh, as SetFaultPlan does:
   * its episode closes as on reset, and the plan counts calls from the new episode's first.
   * `plan` is YAML or JSON text, a plan object, or a plan loadFaultPlan() compiled. Rejects with
   * a ScriptError when the plan is not valid or names a step the session's script lacks; the
   * session then keeps its plan. reset() and loadScript() bring back the script's own plan.
   * Resolves with the closed episode's calls.
   * @param file the name diagnostics give the plan (default `<fault plan for session NAME>`)
   */
  setFaultPlan(session: string, plan: FaultPlanSource, file?: string): Promise<number>;
  /** The session's open episode, decoded. */
  episode(session: string): Episode;
  /**
   * The session's open episode as deterministic bytes (`modelstub.v1.Episode`, binary): the
   * same script and the same calls give the same bytes, whichever transport carried them.
   */
  episodeBytes(session: string): Uint8Array;
  /**
   * Rewinds the session and opens a new episode; calls still running are cut off with
   * CANCELLED. Resolves with the closed episode's calls once it is recorded (with a recordDir).
   */
  reset(session: string): Promise<number>;
  /** Which limited entries (`times: N`) the session has not used up; `satisfied` when none. */
  verify(session: string): Verification;
  /**
   * Closes the session's episode and forgets the session; resolves with the closed episode's
   * calls. Rejects with NOT_FOUND for a session the server does not keep.
   */
  deleteSession(session: string): Promise<number>;
  /** Every session the server keeps, by name. */
  sessions(): SessionSummary[];
}

/** The engine's refusals carry a gRPC status: the same ModelCallError a control client gets. */
function asCallError(err: unknown): unknown {
  const status = (err as { status?: { code: number; message: string } } | null)?.status;
  return status ? new ModelCallError(status.code, status.message) : err;
}

function checked(session: string): string {
  const bad = checkSessionName(session);
  if (bad) throw new ModelCallError(bad.code, bad.message);
  return session;
}

/** A StubControl over `stub`. */
export function createStubControl(stub: Stub): StubControl {
  return {
    async loadScript(session, script, file) {
      checked(session);
      // Compiled first, off the serving loop: an invalid script rejects here and the session keeps its script.
      const compiled = await compileSourceOffLoop(script, file ?? `<script for session ${session}>`);
      await stub.loadScript(session, compiled).catch((err: unknown) => Promise.reject(asCallError(err)));
      return { entries: compiled.entryCount };
    },
    async setFaultPlan(session, plan, file) {
      checked(session);
      const compiled = await compilePlanSourceOffLoop(plan, file ?? `<fault plan for session ${session}>`, () => stub.scriptOf(session));
      return stub.setFaultPlan(session, compiled).catch((err: unknown) => Promise.reject(asCallError(err)));
    },
    episode: (session) => stub.episode(checked(session)),
    episodeBytes: (session) => stub.episodeBytes(checked(session)),
    reset: async (session) => stub.reset(checked(session)).catch((err: unknown) => Promise.reject(asCallError(err))),
    verify: (session) => stub.verify(checked(session)),
    deleteSession: async (session) => stub.deleteSession(checked(session)).catch((err: unknown) => Promise.reject(asCallError(err))),
    sessions: () => stub.sessions(),
  };
}
