import type { Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { checkSessionName } from "../engine/check-session-name.js";
import type { Stub } from "../engine/create-stub.js";
import type { Verification } from "../engine/verify-session.js";
import { missingSession } from "../engine/missing-session.js";
import type { CallEventListener } from "../engine/call-event.js";
import { ModelCallError } from "../port/model-port.js";
import { compileSourceOffLoop, type ScriptSource } from "./script-source.js";
import { compilePlanSourceOffLoop, type FaultPlanSource } from "./fault-plan-source.js";
import { StatusError } from "../shared/status-error.js";

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
  /**
   * The session's open episode, decoded. Throws a ModelCallError NOT_FOUND, naming the closest
   * session the server keeps, for a session it does not keep (a misspelt name would otherwise
   * read as an empty episode): a session exists once a call, loadScript or setFaultPlan names it,
   * until deleteSession or idle eviction forgets it; reset creates none. `allowMissing` answers
   * such a session's empty episode instead, for a test that expects no calls at all.
   */
  episode(session: string, options?: SessionReadOptions): Episode;
  /**
   * The session's open episode as deterministic bytes (`modelstub.v1.Episode`, binary): the
   * same script and the same calls give the same bytes, whichever transport carried them.
   * NOT_FOUND for a session the server does not keep, unless `allowMissing`, as episode().
   */
  episodeBytes(session: string, options?: SessionReadOptions): Uint8Array;
  /**
   * Rewinds the session and opens a new episode; calls still running are cut off with
   * CANCELLED. Resolves with the closed episode's calls once it is recorded (with a recordDir).
   * Idempotent: a session the server does not keep resolves 0, and is not created.
   */
  reset(session: string): Promise<number>;
  /**
   * Which limited entries (`times: N`) the session has not used up; `satisfied` when none.
   * NOT_FOUND for a session the server does not keep, unless `allowMissing` (then it is verified
   * as a session of the server's script that made no calls), as episode().
   */
  verify(session: string, options?: SessionReadOptions): Verification;
  /**
   * Closes the session's episode and forgets the session; resolves with the closed episode's
   * calls. Rejects with NOT_FOUND for a session the server does not keep.
   */
  deleteSession(session: string): Promise<number>;
  /** Every session the server keeps, by name. */
  sessions(): SessionSummary[];
  /**
   * Tells `listener` of every call of `session` that starts or ends from now on, across its
   * episodes (what WatchSession streams); returns the function that stops it.
   */
  watch(session: string, listener: CallEventListener): () => void;
}

/** How episode(), episodeBytes() and verify() treat a session the server does not keep. */
export interface SessionReadOptions {
  /**
   * Answer as for a session that made no calls (an empty episode), instead of throwing NOT_FOUND:
   * for a test asserting that no calls were made. Default false: a misspelt name is an error.
   */
  allowMissing?: boolean;
}

/** How a library caller asks for a missing session's empty episode (missingSession's message says it). */
const optOut = "{ allowMissing: true }";

/** A session's name, checked, and known to the server unless `options.allowMissing`. */
function existing(stub: Stub, session: string, options: SessionReadOptions | undefined): string {
  checked(session);
  const missing = options?.allowMissing ? undefined : missingSession(stub, session, optOut);
  if (missing) throw new ModelCallError(missing.code, missing.message);
  return session;
}

/** The engine's refusals are StatusErrors: the same ModelCallError a control client gets. */
function asCallError(err: unknown): unknown {
  return err instanceof StatusError ? new ModelCallError(err.code, err.message) : err;
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
    episode: (session, options) => stub.episode(existing(stub, session, options)),
    episodeBytes: (session, options) => stub.episodeBytes(existing(stub, session, options)),
    reset: async (session) => stub.reset(checked(session)).catch((err: unknown) => Promise.reject(asCallError(err))),
    verify: (session, options) => stub.verify(existing(stub, session, options)),
    deleteSession: async (session) => stub.deleteSession(checked(session)).catch((err: unknown) => Promise.reject(asCallError(err))),
    sessions: () => stub.sessions(),
    watch: (session, listener) => stub.watch(checked(session), listener),
  };
}
