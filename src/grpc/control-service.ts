import { create } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
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
import type { loadScriptText } from "../script/load-script.js";
import type { loadFaultPlanText } from "../script/load-fault-plan.js";
import { FaultPlanInfoSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { ScriptError } from "../script/script-error.js";
import { Code } from "../shared/status-code.js";
import { sameToken } from "../engine/same-token.js";
import { metadataText, statusError } from "./call-context.js";
import { createFrameWriter } from "./create-frame-writer.js";
import { episodeHeaderOf } from "./answer-headers.js";
import { fitStatusDetails } from "./fit-status-details.js";

type Handler = (request: { session?: string } & Record<string, unknown>) => unknown;

/** The status a failed control call answers with. */
function statusOfError(err: unknown): { code: number; details: string } {
  // Capped: a script's problems can run long, and C-core clients refuse trailers past 8 KiB.
  if (err instanceof ScriptError) return { code: Code.INVALID_ARGUMENT, details: fitStatusDetails(err.message) };
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

/** Counts the calls (field 2) in an episode's bytes without decoding them. */
function countCalls(bytes: Uint8Array): number {
  const reader = new BinaryReader(bytes);
  let calls = 0;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 2 && wireType === WireType.LengthDelimited) calls++;
    reader.skip(wireType, field);
  }
  return calls;
}

/**
 * Writes `bytes` as ExportEpisode messages of at most exportChunkBytes, the first also giving
 * the total size and `calls`. Back-pressure: the chunks handed to grpc-js and not yet written to
 * HTTP/2 are counted (createFrameWriter), and while more than one chunk's bytes are unwritten
 * the next chunk waits until they are all written. HTTP/2 writes only as far as the client's
 * flow-control window lets it, so an export to a client that stops reading holds at most about
 * two chunks in transport buffers (waiting only for 'drain' held up to grpc-js's 16 messages,
 * 16 MiB). It stops at once when the call is cancelled: grpc-js then never calls back a write,
 * so the wait is settled on 'cancelled'. Its listener goes at the end.
 */
async function writeChunks(call: ServerWritableStream<Record<string, unknown>, unknown>, bytes: Uint8Array, calls: number): Promise<void> {
  let cancelled = call.cancelled;
  const writer = createFrameWriter<ExportEpisodeResponse>(call, (m) => m.chunk.length, exportChunkBytes);
  const onCancel = () => {
    cancelled = true;
    writer.release();
  };
  call.on("cancelled", onCancel);
  try {
    // At least one message, even for no bytes at all, so the client always learns the total.
    for (let offset = 0; offset === 0 || offset < bytes.length; offset += exportChunkBytes) {
      if (cancelled) return;
      // A view, not a copy: the serializer copies it into the frame.
      const chunk = bytes.subarray(offset, offset + exportChunkBytes);
      const message = create(ExportEpisodeResponseSchema, offset === 0 ? { chunk, totalBytes: bytes.length, calls } : { chunk });
      const wait = writer.write(message);
      if (wait && !cancelled) await wait;
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
      // One snapshot, encoded afresh: calls recorded while the chunks go out cannot tear it.
      const bytes = stub.episodeBytes(admitted.session);
      episodeHeaderOf(call, stub.episodeIdOf(admitted.session)).beforeMessage();
      writeChunks(call, bytes, countCalls(bytes)).catch((err: unknown) => fail(statusOfError(err)));
    } catch (err) {
      fail(statusOfError(err));
    }
  };
}

let scriptLoader: typeof loadScriptText | undefined;

/**
 * The script loader (YAML, the schema, their explanations), imported on the first LoadScript:
 * a server that serves its start-up script only never pays for it. Synchronous from then on.
 */
async function loadScriptLoader(): Promise<typeof loadScriptText> {
  return (scriptLoader ??= (await import("../script/load-script.js")).loadScriptText);
}

let planLoader: typeof loadFaultPlanText | undefined;

/** The fault plan loader, imported on the first SetFaultPlan (as the script loader is). */
async function loadPlanLoader(): Promise<typeof loadFaultPlanText> {
  return (planLoader ??= (await import("../script/load-fault-plan.js")).loadFaultPlanText);
}

/**
 * ControlService handlers over a stub. An empty session field means `default`. With a `token`,
 * every call must carry `authorization: Bearer <token>`, else UNAUTHENTICATED.
 */
export function controlServiceHandlers(stub: Stub, token?: string): UntypedServiceImplementation {
  return {
    LoadScript: unary(stub, (r) => {
      const session = r.session!;
      const load = (loadText: typeof loadScriptText) => {
        // Compile first: an invalid script throws here and the session keeps its script.
        const script = loadText(String(r["script"] ?? ""), String(r["sourceName"] || `<script for session ${session}>`));
        // Answers once the closed episode is recorded (written to --record-dir, when set).
        return stub.loadScript(session, script).then(() => create(LoadScriptResponseSchema, { entries: script.entryCount }));
      };
      return scriptLoader ? load(scriptLoader) : loadScriptLoader().then(load);
    }, token),
    SetFaultPlan: unary(stub, (r) => {
      const session = r.session!;
      const load = (loadText: typeof loadFaultPlanText) => {
        // Checked against the session's script first: an invalid plan throws here and changes nothing.
        const plan = loadText(String(r["plan"] ?? ""), String(r["sourceName"] || `<fault plan for session ${session}>`), stub.scriptOf(session));
        return stub.setFaultPlan(session, plan).then((closedCalls) =>
          create(SetFaultPlanResponseSchema, {
            plan: create(FaultPlanInfoSchema, { name: plan.name, digest: plan.digest, ...(plan.chaos ? { chaosSeed: plan.chaos.seed } : {}) }),
            closedCalls,
            rules: plan.rules.length,
          }),
        );
      };
      return planLoader ? load(planLoader) : loadPlanLoader().then(load);
    }, token),
    GetEpisode: unary(stub, (r) => {
      const episodeBinpb = stub.episodeBytes(r.session!);
      // bytes_only leaves the decoded copy out: half the size, under default client limits longer.
      if (r["bytesOnly"]) return create(GetEpisodeResponseSchema, { episodeBinpb });
      return create(GetEpisodeResponseSchema, { episode: stub.episode(r.session!), episodeBinpb });
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
