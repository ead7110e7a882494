import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { GenerateRequestSchema, type GenerateResponse, type GenerateStreamResponse, type Model } from "../../gen/modelstub/v1/model_pb.js";
import type { ModelPort as EnginePort, PortCallOptions } from "../port/model-port.js";

/**
 * A GenerateRequest, or a plain object with any of its fields:
 * `{ messages: [{ role: Role.USER, content: "hi" }] }`. Fields left out take their defaults.
 */
export type GenerateRequestInit = MessageInitShape<typeof GenerateRequestSchema>;

/**
 * How a test (or the code under test) calls the model: the same interface over real gRPC
 * (server.client(), createGrpcPort()) and in process (server.inProcess()). A call that ends
 * with a status other than OK rejects with a ModelCallError carrying that status.
 */
export interface ModelPort {
  /** One reply: the unary Generate call. */
  generate(request: GenerateRequestInit, options?: PortCallOptions): Promise<GenerateResponse>;
  /**
   * The streamed reply: GenerateStream's frames, in order. Throws a ModelCallError when the
   * stream ends with a status; leaving the loop early cancels the call.
   */
  generateStream(request: GenerateRequestInit, options?: PortCallOptions): AsyncIterable<GenerateStreamResponse>;
  /** Lets go of the port's connection (nothing for the in-process port). */
  /**
   * The models the session's script declares (ListModels; with none declared, its default
   * model): the same list over gRPC and in process.
   */
  listModels(options?: Pick<PortCallOptions, "session" | "signal" | "timeoutMs">): Promise<Model[]>;
  close(): void;
}

/**
 * Wraps an engine-side port so it takes plain objects too: test code writes requests as
 * literals, and `create` returns a message it is given unchanged.
 */
export function acceptRequestInit(port: EnginePort): ModelPort {
  return {
    generate: (request, options) => port.generate(create(GenerateRequestSchema, request), options),
    generateStream: (request, options) => port.generateStream(create(GenerateRequestSchema, request), options),
    listModels: (options) => port.listModels(options),
    close: () => port.close(),
  };
}
