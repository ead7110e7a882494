import type { MessageInitShape } from "@bufbuild/protobuf";
import type { GenerateRequestSchema, GenerateResponse, GenerateStreamResponse, Model } from "../../gen/modelstub/v1/model_pb.js";

/** Per-call options of a model port. */
export interface PortCallOptions {
  /** Session (metadata x-modelstub-session); default `default`. */
  session?: string;
  /** Step key (metadata x-modelstub-step); the request's step_id works too. */
  step?: string;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Deadline, in ms from now. */
  timeoutMs?: number;
}

/**
 * A GenerateRequest, or a plain object with any of its fields:
 * `{ messages: [{ role: Role.USER, content: "hi" }] }`. Fields left out take their defaults.
 */
export type GenerateRequestInit = MessageInitShape<typeof GenerateRequestSchema>;

/**
 * How a test (or the code under test, an executor) calls the model: the same interface over real
 * gRPC (server.client(), createGrpcPort()) and in process (server.inProcess()), one engine behind
 * both. A request is a GenerateRequest or a plain object (test code writes requests as literals;
 * `create` returns a message it is given unchanged). A call that ends with a status other than OK
 * rejects with a ModelCallError carrying that status.
 */
export interface ModelPort {
  /** One reply: the unary Generate call. */
  generate(request: GenerateRequestInit, options?: PortCallOptions): Promise<GenerateResponse>;
  /**
   * The streamed reply: GenerateStream's frames, in order. Throws a ModelCallError when the
   * stream ends with a status; leaving the loop early cancels the call.
   */
  generateStream(request: GenerateRequestInit, options?: PortCallOptions): AsyncIterable<GenerateStreamResponse>;
  /**
   * The models the session's script declares (ListModels; with none declared, its default
   * model): the same list over gRPC and in process, as the HTTP fronts' model lists give them.
   * `session` picks the script; `signal` and `timeoutMs` as for generate.
   */
  listModels(options?: Pick<PortCallOptions, "session" | "signal" | "timeoutMs">): Promise<Model[]>;
  /** Lets go of the port's connection (nothing for the in-process port). */
  close(): void;
}

/** A model call that ended with a status other than OK. */
export class ModelCallError extends Error {
  override readonly name = "ModelCallError";
  constructor(
    /** gRPC status code number. */
    readonly code: number,
    /** Status message. */
    readonly details: string,
    /** Trailing metadata, in order. */
    readonly trailers: readonly (readonly [string, string])[] = [],
  ) {
    super(`${code}: ${details}`);
  }
}
