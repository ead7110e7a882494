// Longer than 250 lines because it is the whole ControlService in one place: the admission every
// control call shares (its token, its session) and each RPC's handler, in one table.
import { create } from "@bufbuild/protobuf";
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation } from "@grpc/grpc-js";
import {
  DeleteSessionResponseSchema,
  ExportEpisodeResponseSchema,
  type ExportEpisodeResponse,
  GetEpisodeResponseSchema,
  ListSessionsResponseSchema,
  LoadScriptResponseSchema,
  ResetSessionResponseSchema,
  SessionInfoSchema,
  SetFaultPlanResponseSchema,
  UnstruckRuleSchema,
  UnusedEntrySchema,
  VerifySessionResponseSchema,
} from "../../gen/modelstub/v1/control_pb.js";
import { checkSessionName } from "../engine/check-session-name.js";
import type { Stub } from "../engine/create-stub.js";
import { missingSession } from "../engine/missing-session.js";
import { compilerPerCall, type ScriptCompiler } from "../script/script-compiler.js";
import { FaultPlanInfoSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { ScriptError } from "../script/script-error.js";
import { Code } from "../shared/status-code.js";
import { StatusError } from "../shared/status-error.js";
import { sameToken } from "../engine/same-token.js";
import { metadataText } from "./call-metadata.js";
import { grpcStatusError } from "./grpc-status-error.js";
import { createFrameWriter } from "./create-frame-writer.js";
import { episodeHeaderOf } from "./answer-headers.js";
import { fitStatusDetails } from "./fit-status-details.js";
import { encodedAs } from "./service-definition.js";
import { sliceChunks } from "../engine/episode-pieces.js";
import { getEpisodeResponseBytes, getEpisodeTooLarge } from "./get-episode-answer.js";
import { setImmediate } from "node:timers/promises";
import { streamWatch } from "./watch-session.js";

/** A control handler: the request, and its session (admitted: checked, `default` for none). */
type Handler = (request: Record<string, unknown>, session: string) => unknown;

/** The status a failed control call answers with (grpcStatusError caps its details). */
function statusOfError(err: unknown): { code: number; details: string } {
  // Capped: a script's problems can run long, and C-core clients refuse trailers past 8 KiB.
  if (err instanceof ScriptError) return { code: err.exhausted ? Code.RESOURCE_EXHAUSTED : Code.INVALID_ARGUMENT, details: fitStatusDetails(err.message) };
  return grpcStatusError(StatusError.from(err));
}

/** How a gRPC caller asks for a missing session's empty episode (missingSession's message says it). */
const optOut = "allow_missing set in the request (the CLI's --allow-missing)";

/** NOT_FOUND, as the engine's refusals are thrown, for a session the server does not keep. */
function throwIfMissing(stub: Stub, session: string): void {
  const missing = missingSession(stub, session, optOut);
  if (missing) throw new StatusError(missing);
}

type ControlCall = ServerUnaryCall<Record<string, unknown>, unknown> | ServerWritableStream<Record<string, unknown>, unknown>;

/**
 * Admits a control call: the token (when the server has one), then the session name (empty
 * means `default`). Answers the session, or the status to refuse the call with.
 */
function admit(call: ControlCall, token: string | undefined): { session: string } | { refused: { code: number; details: string } } {
  if (token !== undefined) {
    const auth = metadataText(call.metadata, "authorization");
    if (!auth)
      return {
        refused: { code: Code.UNAUTHENTICATED, details: "ControlService needs metadata `authorization: Bearer <token>` (the server's --control-token)" },
      };
    if (!sameToken(auth.replace(/^Bearer\s+/i, ""), token)) return { refused: { code: Code.UNAUTHENTICATED, details: "wrong control token" } };
  }
  const named = call.request["session"];
  const session = (typeof named === "string" && named) || "default";
  const bad = checkSessionName(session);
  return bad ? { refused: grpcStatusError(bad) } : { session };
}

/**
 * Wraps a control handler: the token, then the session check, every throw and rejection a
 * status. A handler may return a promise (reset and reload answer once the closed episode is
 * recorded); grpc-js would lose its rejection, so it is caught here.
 */
function unary(stub: Stub, run: Handler, token: string | undefined) {
  return (call: ServerUnaryCall<Record<string, unknown>, unknown>, answer: sendUnaryData<unknown>) => {
    let session: string | undefined;
    // The session's episode as the call leaves it: a reset or a reload answers with the new one.
    const callback = (err: { code: number; details: string } | null, r?: unknown) => {
      const header = episodeHeaderOf(call, session === undefined ? undefined : stub.episodeIdOf(session));
      if (err) return answer(header.onError(err));
      header.beforeMessage();
      answer(null, r);
    };
    try {
      const admitted = admit(call, token);
      if ("refused" in admitted) return callback(admitted.refused);
      session = admitted.session;
      const result = run(call.request, session);
      if (result instanceof Promise)
        result.then(
          (r) => callback(null, r),
          (err: unknown) => callback(statusOfError(err)),
        );
      else callback(null, result);
    } catch (err) {
      callback(statusOfError(err));
    }
  };
}

/**
 * The largest chunk ExportEpisode sends: 1 MiB, a quarter of the 4 MiB that gRPC clients
 * accept by default, so the export needs no client option whatever the episode's size.
 */
export const exportChunkBytes = 1024 * 1024;

/**
 * Writes the episode's chunks (each at most exportChunkBytes) as ExportEpisode messages, the
 * first also giving the total size and `calls`. Back-pressure: the chunks handed to grpc-js and
 * not yet written to HTTP/2 are counted (createFrameWriter), and while more than one chunk's
 * bytes are unwritten the next chunk waits until they are all written. HTTP/2 writes only as far
 * as the client's flow-control window lets it, so an export to a client that stops reading holds
 * at most about two chunks in transport buffers (waiting only for 'drain' held up to grpc-js's 16
 * messages, 16 MiB). A chunk is copied from the episode's pieces when its turn comes, and the loop
 * runs other work between two chunks even when the client keeps up: a 64 MiB export held the
 * loop 100-400 ms when the whole episode was copied first. It stops at once when the call is
 * cancelled: grpc-js then never calls back a write, so the wait is settled on 'cancelled'. Its
 * listener goes at the end.
 */
async function writeChunks(
  call: ServerWritableStream<Record<string, unknown>, unknown>,
  chunks: Iterable<Uint8Array>,
  totalBytes: number,
  calls: number,
): Promise<void> {
  let cancelled = call.cancelled;
  const writer = createFrameWriter<ExportEpisodeResponse>(call, (m) => m.chunk.length, exportChunkBytes);
  const onCancel = () => {
    cancelled = true;
    writer.release();
  };
  call.on("cancelled", onCancel);
  try {
    // At least one message, even for no bytes at all, so the client always learns the total.
    let first = true;
    for (const chunk of chunks) {
      if (cancelled) return;
      const message = create(ExportEpisodeResponseSchema, first ? { chunk, totalBytes, calls } : { chunk });
      first = false;
      const wait = writer.write(message);
      if (wait && !cancelled) await wait;
      else await setImmediate();
    }
    if (!cancelled) call.end();
  } finally {
    call.removeListener("cancelled", onCancel);
    writer.release();
  }
}

/** ExportEpisode: GetEpisode's admission, then the episode's bytes in chunks (writeChunks). */
function exportEpisode(stub: Stub, token: string | undefined) {
  return (call: ServerWritableStream<Record<string, unknown>, unknown>) => {
    // grpc-js turns an 'error' event into the call's status and ends it.
    const fail = (status: { code: number; details: string }) => void call.emit("error", status);
    try {
      const admitted = admit(call, token);
      if ("refused" in admitted) return fail(admitted.refused);
      const missing = call.request["allowMissing"] ? undefined : missingSession(stub, admitted.session, optOut);
      if (missing) return fail(grpcStatusError(missing));
      // One snapshot: calls recorded while the chunks go out cannot tear it.
      const e = stub.episodePieces(admitted.session);
      episodeHeaderOf(call, stub.episodeIdOf(admitted.session)).beforeMessage();
      writeChunks(call, sliceChunks(e.pieces, e.size, exportChunkBytes), e.size, e.calls).catch((err: unknown) => fail(statusOfError(err)));
    } catch (err) {
      fail(statusOfError(err));
    }
  };
}

/**
 * ControlService handlers over a stub. An empty session field means `default`. With a `token`,
 * every call must carry `authorization: Bearer <token>`, else UNAUTHENTICATED. Scripts and fault
 * plans are checked by `compiler`, off the serving loop: one too costly is RESOURCE_EXHAUSTED.
 * `watches` holds a function per open WatchSession stream that ends it (for shutdown).
 */
export function controlServiceHandlers(
  stub: Stub,
  token?: string,
  compiler: ScriptCompiler = compilerPerCall,
  watches: Set<() => void> = new Set(),
): UntypedServiceImplementation {
  return {
    LoadScript: unary(
      stub,
      async (r, session) => {
        // Compile first: an invalid script rejects here and the session keeps its script.
        const script = await compiler.script(String(r["script"] ?? ""), String(r["sourceName"] || `<script for session ${session}>`));
        // Answers once the closed episode is recorded (written to --record-dir, when set).
        await stub.loadScript(session, script);
        return create(LoadScriptResponseSchema, { entries: script.entryCount });
      },
      token,
    ),
    SetFaultPlan: unary(
      stub,
      async (r, session) => {
        // Checked against the session's script first: an invalid plan rejects here and changes nothing.
        const plan = await compiler.faultPlan(String(r["plan"] ?? ""), String(r["sourceName"] || `<fault plan for session ${session}>`), () =>
          stub.scriptOf(session),
        );
        const closedCalls = await stub.setFaultPlan(session, plan);
        return create(SetFaultPlanResponseSchema, {
          plan: create(FaultPlanInfoSchema, { name: plan.name, digest: plan.digest, ...(plan.chaos ? { chaosSeed: plan.chaos.seed } : {}) }),
          closedCalls,
          rules: plan.rules.length,
        });
      },
      token,
    ),
    GetEpisode: unary(
      stub,
      async (r, session) => {
        if (!r["allowMissing"]) throwIfMissing(stub, session);
        const e = stub.episodePieces(session);
        // bytes_only leaves the decoded copy out: half the size, under default client limits longer.
        const tooLarge = getEpisodeTooLarge(session, e, !r["bytesOnly"]);
        if (tooLarge) throw tooLarge;
        const bytes = await getEpisodeResponseBytes(e, !r["bytesOnly"]);
        // Never decoded here: the answer is sent as these bytes, whose end is the episode's.
        return encodedAs(create(GetEpisodeResponseSchema, { episodeBinpb: bytes.subarray(bytes.length - e.size) }), () => bytes);
      },
      token,
    ),
    ExportEpisode: exportEpisode(stub, token),
    WatchSession: (call: ServerWritableStream<Record<string, unknown>, unknown>) => {
      const admitted = admit(call, token);
      if ("refused" in admitted) return void call.emit("error", admitted.refused);
      streamWatch(stub, admitted.session, call, watches);
    },
    ResetSession: unary(stub, async (_, session) => create(ResetSessionResponseSchema, { calls: await stub.reset(session) }), token),
    // Answers once the closed episode is recorded, like ResetSession; the slot is free at once.
    DeleteSession: unary(stub, async (_, session) => create(DeleteSessionResponseSchema, { calls: await stub.deleteSession(session) }), token),
    VerifySession: unary(
      stub,
      (r, session) => {
        if (!r["allowMissing"]) throwIfMissing(stub, session);
        const v = stub.verify(session);
        return create(VerifySessionResponseSchema, {
          satisfied: v.satisfied,
          message: v.message,
          unused: v.unused.map((u) =>
            create(UnusedEntrySchema, { entry: u.entry, remaining: Number.isFinite(u.remaining) ? u.remaining : 0, summary: u.summary }),
          ),
          unstruck: v.unstruck.map((u) => create(UnstruckRuleSchema, u)),
        });
      },
      token,
    ),
    ListSessions: unary(
      stub,
      () =>
        create(ListSessionsResponseSchema, {
          sessions: stub.sessions().map((s) => create(SessionInfoSchema, { name: s.name, calls: s.calls, running: s.running, scriptName: s.scriptName })),
        }),
      token,
    ),
  };
}
