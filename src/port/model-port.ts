import type { GenerateRequest, GenerateResponse, GenerateStreamResponse, Model } from "../../gen/modelstub/v1/model_pb.js";

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
 * How an executor calls a model. Two implementations share one engine: in-process (no
 * network) and a gRPC client. Both fail with ModelCallError carrying the gRPC status.
 */
export interface ModelPort {
  generate(request: GenerateRequest, options?: PortCallOptions): Promise<GenerateResponse>;
  /** Yields the stream's frames; throws ModelCallError when the stream ends with a status. */
  generateStream(request: GenerateRequest, options?: PortCallOptions): AsyncIterable<GenerateStreamResponse>;
  /**
   * The models the session's script declares (ListModels; with none declared, its default model),
   * as the HTTP fronts' model lists give them. `session` picks the script; `signal` and
   * `timeoutMs` as for generate.
   */
  listModels(options?: Pick<PortCallOptions, "session" | "signal" | "timeoutMs">): Promise<Model[]>;
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
