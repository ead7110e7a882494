import { create } from "@bufbuild/protobuf";
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation } from "@grpc/grpc-js";
import {
  GenerateRequestSchema,
  ListModelsResponseSchema,
  ModelSchema,
  type GenerateRequest,
  type GenerateResponse,
  type GenerateStreamRequest,
  type GenerateStreamResponse,
  type ListModelsRequest,
  type ListModelsResponse,
} from "../../gen/modelstub/v1/model_pb.js";
import { checkSessionName } from "../engine/check-session-name.js";
import type { Stub } from "../engine/create-stub.js";
import type { CallStatus } from "../script/compiled-script.js";
import type { CallLog } from "../engine/call-log.js";
import type { CallResult } from "../engine/call-result.js";
import { ranCallFields, refusedOutcome } from "../log/call-record.js";
import type { Logger } from "../log/create-logger.js";
import { Code, codeName } from "../shared/status-code.js";
import { callSignal, dropCall, metadataText, sessionOf, statusError, stepHeader } from "./call-context.js";
import { createFrameWriter } from "./create-frame-writer.js";
import { episodeHeaderOf } from "./answer-headers.js";
import { overLimitStatus } from "./limit-request.js";
import { inTurn } from "./in-turn.js";

function internal(err: unknown) {
  return { code: Code.INTERNAL, details: `modelstub internal error: ${err instanceof Error ? err.message : String(err)}` };
}

/**
 * The GenerateStream request as the GenerateRequest it mirrors field for field. Its unknown
 * fields go along: the numbers are the same, and the episode records a request as it was sent.
 */
function asGenerateRequest(r: GenerateStreamRequest): GenerateRequest {
  const request = create(GenerateRequestSchema, { model: r.model, messages: r.messages, tools: r.tools, sampling: r.sampling, stepId: r.stepId });
  if (r.$unknown) request.$unknown = r.$unknown;
  return request;
}

/**
 * How many bytes of frames one stream may have handed to grpc-js and not yet seen written to
 * HTTP/2 before its next frame waits: 64 KiB, one default HTTP/2 stream window. HTTP/2 writes
 * only as far as the client's flow-control window lets it, so past the window and this, a
 * client that stops reading stops the call.
 */
export const maxUnwrittenBytes = 64 * 1024;

/** A frame's size on the wire, give or take a few bytes of tags and lengths. */
function frameBytes(f: GenerateStreamResponse): number {
  const v = f.frame;
  let n = 16 + f.id.length + f.model.length;
  if (v.case === "textDelta") n += Buffer.byteLength(v.value);
  else if (v.case === "toolCallDelta") n += Buffer.byteLength(v.value.arguments) + v.value.id.length + v.value.name.length;
  return n;
}

/**
 * ModelService handlers over a stub. Every handler catches everything: grpc-js only catches
 * synchronous throws, so a rejected promise would otherwise never reach the client.
 */

export function modelServiceHandlers(stub: Stub, logger?: Logger): UntypedServiceImplementation {
  /**
   * One log line per call, refused calls included. The engine reports every call it runs
   * (onLog); a call it refused before running (draining, a cap) ends with a status and no
   * report, and a request past the limits, a bad session name or a bad step id never reaches
   * it: those are logged here.
   */
  const callLog = (method: "Generate" | "GenerateStream", session: string, step: string) => {
    let reported = false;
    return {
      onLog: logger
        ? (l: CallLog) => {
            reported = true;
            logger.call({ transport: "grpc", method, session: l.session, step: l.step, ...ranCallFields(l) });
          }
        : undefined,
      /** Logs `status` as a refusal when the engine did not run the call (it reported nothing). */
      ifRefused(status: CallStatus) {
        // A refused name or step can be any length: the line keeps as much of it as the status message does.
        if (reported || !logger) return;
        logger.call({
          transport: "grpc",
          method,
          session: session.slice(0, 140),
          step: step.slice(0, 140),
          entry: "",
          outcome: refusedOutcome,
          code: codeName(status.code),
          declaredMs: 0,
          message: status.message,
        });
      },
    };
  };
  return {
    Generate(call: ServerUnaryCall<GenerateRequest, GenerateResponse>, callback: sendUnaryData<GenerateResponse>) {
      try {
        const session = sessionOf(call.metadata);
        const stepFromMetadata = metadataText(call.metadata, stepHeader);
        const log = callLog("Generate", session, call.request.stepId || stepFromMetadata);
        // Refused before the engine sees the call, so it is in no episode (the log still says why);
        // the engine refuses a malformed step id the same way.
        const bad = overLimitStatus(call.request) ?? checkSessionName(session);
        if (bad) {
          log.ifRefused(bad);
          return callback(statusError(bad));
        }
        inTurn(
          call,
          () => {
            const wiring = callSignal(call);
            const header = episodeHeaderOf(call);
            const running = stub.call({
              session,
              method: "generate",
              request: call.request,
              stepFromMetadata,
              get signal() {
                return wiring.signal;
              },
              budgetMs: wiring.budgetMs,
              onLog: log.onLog,
              onStart: (s) => void (header.episode = s.episode),
            });
            // A call the engine refused (draining, a cap) never joined one: the session's, if any.
            header.episode ??= stub.episodeIdOf(session);
            running
              .then((result: CallResult) => {
                wiring.release();
                switch (result.kind) {
                  case "ok":
                    header.beforeMessage();
                    return callback(null, result.response);
                  case "status":
                    log.ifRefused(result.status);
                    return callback(header.onError(statusError(result.status)));
                  case "drop":
                    if (!dropCall(call)) callback(header.onError({ code: Code.UNAVAILABLE, details: "the script dropped the connection" }));
                    return;
                  case "aborted":
                    return; // grpc-js has ended the call already.
                }
              })
              .catch((err: unknown) => callback(internal(err)));
          },
          (err) => callback(internal(err)),
        );
      } catch (err) {
        callback(internal(err));
      }
    },

    GenerateStream(call: ServerWritableStream<GenerateStreamRequest, GenerateStreamResponse>) {
      const fail = (e: { code: number; details: string }) => {
        call.emit("error", e);
      };
      try {
        const session = sessionOf(call.metadata);
        const stepFromMetadata = metadataText(call.metadata, stepHeader);
        const log = callLog("GenerateStream", session, call.request.stepId || stepFromMetadata);
        // Refused before the engine sees the call, so it is in no episode (the log still says why);
        // the engine refuses a malformed step id the same way.
        const bad = overLimitStatus(call.request) ?? checkSessionName(session);
        if (bad) {
          log.ifRefused(bad);
          return fail(statusError(bad));
        }
        inTurn(
          call,
          () => {
            const wiring = callSignal(call);
            const header = episodeHeaderOf(call);
            const writer = createFrameWriter<GenerateStreamResponse>(call, frameBytes, maxUnwrittenBytes);
            const drop = async () => {
              // Frames handed to grpc-js but not yet to HTTP/2: the drop waits for them, so the
              // client gets exactly the chunks the script says before the reset.
              await writer.written();
              // One more turn of the event loop lets HTTP/2 put the DATA frames on the wire first.
              await new Promise((resolve) => setTimeout(resolve, 5));
              if (!dropCall(call)) fail(header.onError({ code: Code.UNAVAILABLE, details: "the script dropped the connection" }));
            };
            const running = stub.call({
              session,
              method: "stream",
              request: asGenerateRequest(call.request),
              stepFromMetadata,
              get signal() {
                return wiring.signal;
              },
              budgetMs: wiring.budgetMs,
              onLog: log.onLog,
              onFrame: (frame) => {
                header.beforeMessage();
                return writer.write(frame);
              },
              onStart: (s) => void (header.episode = s.episode),
            });
            header.episode ??= stub.episodeIdOf(session);
            running
              .then((result: CallResult) => {
                wiring.release();
                // A drop still waits for the frames to be written; anything else waits for nothing.
                if (result.kind !== "drop") writer.release();
                switch (result.kind) {
                  case "ok":
                    header.beforeMessage();
                    return call.end();
                  case "status":
                    log.ifRefused(result.status);
                    return fail(header.onError(statusError(result.status)));
                  case "drop":
                    return drop();
                  case "aborted":
                    return;
                }
              })
              .catch((err: unknown) => fail(internal(err)));
          },
          (err) => fail(internal(err)),
        );
      } catch (err) {
        fail(internal(err));
      }
    },

    ListModels(call: ServerUnaryCall<ListModelsRequest, ListModelsResponse>, callback: sendUnaryData<ListModelsResponse>) {
      try {
        const script = stub.scriptOf(sessionOf(call.metadata));
        const declared = script.models.length > 0 ? script.models : [{ id: script.defaultModel, name: script.defaultModel, ownedBy: "modelstub", contextLength: 0, inputModalities: ["text"], outputModalities: ["text"], promptPrice: "0", completionPrice: "0" }];
        callback(null, create(ListModelsResponseSchema, { models: declared.map((m) => create(ModelSchema, m)) }));
      } catch (err) {
        callback(internal(err));
      }
    },
  };
}
