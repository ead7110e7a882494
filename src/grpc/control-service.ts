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
  UnusedEntrySchema,
  VerifySessionResponseSchema,
} from "../../gen/modelstub/v1/control_pb.js";
import { checkSessionName } from "../engine/check-session-name.js";
import type { Stub } from "../engine/create-stub.js";
import { compilerPerCall, type ScriptCompiler } from "../script/script-compiler.js";
import { FaultPlanInfoSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { ScriptError } from "../script/script-error.js";
import { Code } from "../shared/status-code.js";
import { sameToken } from "../engine/same-token.js";
import { metadataText, statusError } from "./call-context.js";
import { createFrameWriter } from "./create-frame-writer.js";
import { episodeHeaderOf } from "./answer-headers.js";
import { fitStatusDetails } from "./fit-status-details.js";
import { encodedAs } from "./service-definition.js";
import { fieldHead, joinPieces, sliceChunks, type EpisodePieces } from "../engine/episode-pieces.js";
import { setImmediate } from "node:timers/promises";

type Handler = (request: { session?: string } & Record<string, unknown>) => unknown;

/** The status a failed control call answers with. */
function statusOfError(err: unknown): { code: number; details: string } {
  // Capped: a script's problems can run long, and C-core clients refuse trailers past 8 KiB.
  if (err instanceof ScriptError) return { code: err.exhausted ? Code.RESOURCE_EXHAUSTED : Code.INVALID_ARGUMENT, details: fitStatusDetails(err.message) };
  const status = (err as { status?: { code: number; message: string } }).status;
  if (status) return { code: status.code, details: fitStatusDetails(status.message) };
  return { code: Code.INTERNAL, details: fitStatusDetails(`modelstub internal error: ${err instanceof Error ? err.message : String(err)}`) };
}

type ControlCall = ServerUnaryCall<Record<string, unknown>, unknown> | ServerWritableStream<Record<string, unknown>, unknown>;

/**
 * Admits a control call: the token (when the server has one), then the session name (empty
 * means `default`). Answers the session, or the status to refuse the call with.
 */
function admit(call: ControlCall, token: string | undefined): { session: string } | { refused: { code: number; details: string } } {
  if (token !== undefined) {
    const auth = metadataText(call.metadata, "authorization");
    if (!auth) return { refused: { code: Code.UNAUTHENTICATED, details: "ControlService needs metadata `authorization: Bearer <token>` (the server's --control-token)" } };
    if (!sameToken(auth.replace(/^Bearer\s+/i, ""), token)) return { refused: { code: Code.UNAUTHENTICATED, details: "wrong control token" } };
  }
  const session = (call.request["session"] as string | undefined) || "default";
  const bad = checkSessionName(session);
  return bad ? { refused: statusError(bad) } : { session };
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
      const result = run({ ...call.request, session });
      if (result instanceof Promise) result.then((r) => callback(null, r), (err: unknown) => callback(statusOfError(err)));
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
async function writeChunks(call: ServerWritableStream<Record<string, unknown>, unknown>, chunks: Iterable<Uint8Array>, totalBytes: number, calls: number): Promise<void> {
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
 * A GetEpisodeResponse's bytes from the episode's pieces: field 1, the Episode message, is exactly
 * the episode's deterministic bytes (what toBinary of the decoded episode writes), and field 2 is
 * the same bytes again. Decoding a 64 MiB episode to have toBinary encode it back held the loop
 * about a second; this copies the pieces, a slice per turn of the loop (joinPieces). Byte for
 * byte what toBinary(GetEpisodeResponseSchema, {episode, episodeBinpb}) writes
 * (test/grpc/get-episode-bytes.test.ts). grpc-js still copies the answer into its frame at once:
 * about 1 ms per MB on a busy 2-core machine, which ExportEpisode does not cost.
 */
export async function getEpisodeResponseBytes(e: EpisodePieces, withEpisode: boolean): Promise<Uint8Array> {
  const pieces: Uint8Array[] = [];
  // A set message field is written even when empty; empty bytes (proto3's zero value) are not.
  if (withEpisode) pieces.push(fieldHead(0x0a, e.size), ...e.pieces);
  if (e.size > 0) pieces.push(fieldHead(0x12, e.size), ...e.pieces);
  let size = 0;
  for (const p of pieces) size += p.length;
  return joinPieces(pieces, size);
}

/**
 * ControlService handlers over a stub. An empty session field means `default`. With a `token`,
 * every call must carry `authorization: Bearer <token>`, else UNAUTHENTICATED. Scripts and fault
 * plans are checked by `compiler`, off the serving loop: one too costly is RESOURCE_EXHAUSTED.
 */
export function controlServiceHandlers(stub: Stub, token?: string, compiler: ScriptCompiler = compilerPerCall): UntypedServiceImplementation {
  return {
    LoadScript: unary(stub, async (r) => {
      const session = r.session!;
      // Compile first: an invalid script rejects here and the session keeps its script.
      const script = await compiler.script(String(r["script"] ?? ""), String(r["sourceName"] || `<script for session ${session}>`));
      // Answers once the closed episode is recorded (written to --record-dir, when set).
      await stub.loadScript(session, script);
      return create(LoadScriptResponseSchema, { entries: script.entryCount });
    }, token),
    SetFaultPlan: unary(stub, async (r) => {
      const session = r.session!;
      // Checked against the session's script first: an invalid plan rejects here and changes nothing.
      const plan = await compiler.faultPlan(String(r["plan"] ?? ""), String(r["sourceName"] || `<fault plan for session ${session}>`), () => stub.scriptOf(session));
      const closedCalls = await stub.setFaultPlan(session, plan);
      return create(SetFaultPlanResponseSchema, {
        plan: create(FaultPlanInfoSchema, { name: plan.name, digest: plan.digest, ...(plan.chaos ? { chaosSeed: plan.chaos.seed } : {}) }),
        closedCalls,
        rules: plan.rules.length,
      });
    }, token),
    GetEpisode: unary(stub, async (r) => {
      const e = stub.episodePieces(r.session!);
      // bytes_only leaves the decoded copy out: half the size, under default client limits longer.
      const bytes = await getEpisodeResponseBytes(e, !r["bytesOnly"]);
      // Never decoded here: the answer is sent as these bytes, whose end is the episode's.
      return encodedAs(create(GetEpisodeResponseSchema, { episodeBinpb: bytes.subarray(bytes.length - e.size) }), () => bytes);
    }, token),
    ExportEpisode: exportEpisode(stub, token),
    ResetSession: unary(stub, async (r) => create(ResetSessionResponseSchema, { calls: await stub.reset(r.session!) }), token),
    // Answers once the closed episode is recorded, like ResetSession; the slot is free at once.
    DeleteSession: unary(stub, async (r) => create(DeleteSessionResponseSchema, { calls: await stub.deleteSession(r.session!) }), token),
    VerifySession: unary(stub, (r) => {
      const v = stub.verify(r.session!);
      return create(VerifySessionResponseSchema, {
        satisfied: v.satisfied,
        message: v.message,
        unused: v.unused.map((u) => create(UnusedEntrySchema, { entry: u.entry, remaining: Number.isFinite(u.remaining) ? u.remaining : 0, summary: u.summary })),
      });
    }, token),
    ListSessions: unary(stub, () =>
      create(ListSessionsResponseSchema, {
        sessions: stub.sessions().map((s) => create(SessionInfoSchema, { name: s.name, calls: s.calls, running: s.running, scriptName: s.scriptName })),
      }),
      token,
    ),
  };
}
