import { create } from "@bufbuild/protobuf";
import { modelsOf } from "../engine/models-of.js";
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
import type { Stub } from "../engine/create-stub.js";
import type { CallResult } from "../engine/call-result.js";
import type { Logger } from "../log/create-logger.js";
import { Code } from "../shared/status-code.js";
import { StatusError } from "../shared/status-error.js";
import type { CallInput } from "../engine/call-input.js";
import { sessionOf } from "./call-metadata.js";
import { callSignal } from "./call-signal.js";
import { dropCall } from "./drop-call.js";
import { grpcStatusError } from "./grpc-status-error.js";
import { createFrameWriter } from "./create-frame-writer.js";
import { episodeHeaderOf, type EpisodeHeader } from "./answer-headers.js";
import type { RequestOverLimit } from "./limit-request.js";
import { admit, type Admitted, type AdmittedLater, type ModelCall } from "./admit-model-call.js";
import { type DeferredRequest, undecodableStatus } from "./deferred-request.js";
import { heavyTurn } from "../shared/heavy-turns.js";
import { inTurn } from "./in-turn.js";

/** What a throw or a rejection in a handler answers: INTERNAL, or the status thrown (StatusError.from). */
function internal(err: unknown) {
  return grpcStatusError(StatusError.from(err));
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

/** The status of a call whose drop could not reset its HTTP/2 stream (see dropCall). */
const droppedStatus = { code: Code.UNAVAILABLE, details: "the script dropped the connection" };

/** A frame's size on the wire, give or take a few bytes of tags and lengths. */
function frameBytes(f: GenerateStreamResponse): number {
  const v = f.frame;
  let n = 16 + f.id.length + f.model.length;
  if (v.case === "textDelta") n += Buffer.byteLength(v.value);
  else if (v.case === "toolCallDelta") n += Buffer.byteLength(v.value.arguments) + v.value.id.length + v.value.name.length;
  return n;
}

/** How a method answers one call: made on the call's turn, with the call's episode header. */
interface Answer {
  /** Stream calls: takes each frame (CallInput.onFrame). */
  onFrame?: CallInput["onFrame"];
  /** Answers the call's result; the call's signal is released by then. A rejection fails the call INTERNAL. */
  end(result: CallResult): void | Promise<void>;
}

/**
 * Runs an admitted call on the stub, on its turn (inTurn): the call's signal and budget from
 * grpc-js, its episode header, its log; `answerOf` makes the method's answer when the turn comes
 * (a call cancelled while it waited for its turn makes none). A throw or a rejection fails the call INTERNAL.
 */
function runAdmitted<R>(
  stub: Stub,
  call: ModelCall<R>,
  admitted: Admitted<GenerateRequest> | AdmittedLater<GenerateRequest>,
  method: CallInput["method"],
  fail: (e: ReturnType<typeof grpcStatusError>) => void,
  answerOf: (header: EpisodeHeader) => Answer,
): void {
  // A request of MBs is decoded on a heavy turn of its own (deferred-request.ts), then run on the next.
  if ("decode" in admitted) {
    heavyTurn()
      .then(() => {
        if (call.cancelled) return;
        let a: Admitted<GenerateRequest>;
        try {
          a = admitted.decode();
        } catch (err) {
          return fail(grpcStatusError(undecodableStatus(err)));
        }
        runAdmitted(stub, call, a, method, fail, answerOf);
      })
      .catch((err: unknown) => fail(internal(err)));
    return;
  }
  const a = admitted;
  const turn = {
    request: a.request,
    get cancelled() {
      return call.cancelled;
    },
  };
  inTurn(
    turn,
    () => {
      const wiring = callSignal(call);
      const header = episodeHeaderOf(call);
      const answer = answerOf(header);
      const running = stub.call({
        session: a.session,
        method,
        request: a.request,
        stepFromMetadata: a.stepFromMetadata,
        get signal() {
          return wiring.signal;
        },
        budgetMs: wiring.budgetMs,
        onLog: a.log.onLog,
        onFrame: answer.onFrame,
        onStart: (s) => void (header.episode = s.episode),
      });
      // A call the engine refused (draining, a cap, a bad name) never joined one: the session's, if any.
      header.episode ??= stub.episodeIdOf(a.session);
      running
        .then((result) => {
          wiring.release();
          if (result.kind === "status") a.log.ifRefused(result.status);
          return answer.end(result);
        })
        .catch((err: unknown) => fail(internal(err)));
    },
    (err) => fail(internal(err)),
  );
}

/**
 * GenerateStream's answer: frames through a frame writer (back-pressure: maxUnwrittenBytes),
 * then the end, the status, or the drop once the frames before it are written.
 */
function streamAnswer(
  call: ServerWritableStream<unknown, GenerateStreamResponse>,
  header: EpisodeHeader,
  fail: (e: { code: number; details: string }) => void,
): Answer {
  const writer = createFrameWriter<GenerateStreamResponse>(call, frameBytes, maxUnwrittenBytes);
  const drop = async () => {
    // Frames handed to grpc-js but not yet to HTTP/2: the drop waits for them, so the
    // client gets exactly the chunks the script says before the reset.
    await writer.written();
    // One more turn of the event loop lets HTTP/2 put the DATA frames on the wire first.
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (!dropCall(call)) fail(header.onError(droppedStatus));
  };
  return {
    onFrame(frame) {
      header.beforeMessage();
      return writer.write(frame);
    },
    end(result) {
      // A drop still waits for the frames to be written; anything else waits for nothing.
      if (result.kind !== "drop") writer.release();
      switch (result.kind) {
        case "ok":
          header.beforeMessage();
          call.end();
          return;
        case "status":
          return fail(header.onError(grpcStatusError(result.status)));
        case "drop":
          return drop();
        case "aborted":
          return;
      }
    },
  };
}

/**
 * ModelService handlers over a stub. Every handler catches everything: grpc-js only catches
 * synchronous throws, so a rejected promise would otherwise never reach the client.
 */
export function modelServiceHandlers(stub: Stub, logger?: Logger): UntypedServiceImplementation {
  return {
    Generate(call: ServerUnaryCall<GenerateRequest | RequestOverLimit | DeferredRequest, GenerateResponse>, callback: sendUnaryData<GenerateResponse>) {
      try {
        const admitted = admit(call, "Generate", logger, callback);
        if (!admitted) return;
        runAdmitted(stub, call, admitted, "generate", callback, (header) => ({
          end(result) {
            switch (result.kind) {
              case "ok":
                header.beforeMessage();
                return callback(null, result.response);
              case "status":
                return callback(header.onError(grpcStatusError(result.status)));
              case "drop":
                if (!dropCall(call)) callback(header.onError(droppedStatus));
                return;
              case "aborted":
                return; // grpc-js has ended the call already.
            }
          },
        }));
      } catch (err) {
        callback(internal(err));
      }
    },

    GenerateStream(call: ServerWritableStream<GenerateStreamRequest | RequestOverLimit | DeferredRequest, GenerateStreamResponse>) {
      // grpc-js turns an 'error' event into the call's status and ends it.
      const fail = (e: { code: number; details: string }) => void call.emit("error", e);
      try {
        const admitted = admit(call, "GenerateStream", logger, fail);
        if (!admitted) return;
        const asGenerate = (a: Admitted<GenerateStreamRequest>): Admitted<GenerateRequest> => ({ ...a, request: asGenerateRequest(a.request) });
        runAdmitted(stub, call, "decode" in admitted ? { decode: () => asGenerate(admitted.decode()) } : asGenerate(admitted), "stream", fail, (header) =>
          streamAnswer(call, header, fail),
        );
      } catch (err) {
        fail(internal(err));
      }
    },

    ListModels(call: ServerUnaryCall<ListModelsRequest, ListModelsResponse>, callback: sendUnaryData<ListModelsResponse>) {
      try {
        const script = stub.scriptOf(sessionOf(call.metadata));
        callback(null, create(ListModelsResponseSchema, { models: modelsOf(script).map((m) => create(ModelSchema, m)) }));
      } catch (err) {
        callback(internal(err));
      }
    },
  };
}
