import type { GenerateRequest, GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { CallLog } from "./call-log.js";

/** One model call as a transport hands it to the engine. */
export interface CallInput {
  /** Session name; the engine checks it (Stub.call refuses a malformed one, in no episode). */
  session: string;
  method: "generate" | "stream";
  request: GenerateRequest;
  /** Step id from metadata (`x-modelstub-step`), if any. */
  stepFromMetadata?: string | undefined;
  /** What carried stepFromMetadata, for messages: gRPC metadata (the default) or an HTTP header. */
  stepCarrier?: "metadata" | "header" | undefined;
  /**
   * Aborted with reason "deadline" or "cancelled" when the call is cut off. Read only when the
   * call waits or streams, so a transport may create it lazily (a getter): an AbortController
   * is a measurable part of a call that never waits.
   */
  readonly signal: AbortSignal;
  /**
   * Milliseconds the caller allows, measured at arrival; Infinity for no deadline. Only the
   * virtual clock reads it (a real deadline aborts the signal); it never enters the episode.
   */
  budgetMs?: number | undefined;
  /**
   * Receives stream frames (stream calls only). Returns nothing while the transport can take
   * more, so a reader that keeps up costs no promise per frame; returns a promise when its
   * buffer is full, and the call sends nothing more until it settles (back-pressure: see
   * README, "Streams and slow readers"). The engine stops waiting on its own when the call is
   * cut off, so the transport need not settle it then; it must release what the promise holds
   * when the call ends, however it ends. A frame is counted in `chunks_sent` when it is handed
   * over, before any wait.
   */
  onFrame?: ((frame: GenerateStreamResponse) => void | Promise<void>) | undefined;
  /**
   * Told once the call has its sequence number and declared start, before any frame: the HTTP
   * front derives its wire `created` from the declared timeline, never from the wall clock.
   * `episode` is the id of the episode the call records into (x-modelstub-episode). The engine
   * tells it synchronously, within `Stub.call()`, so a transport can send its headers before
   * the call's first await.
   */
  onStart?: ((start: { sequence: number; startMs: number; episode?: string }) => void) | undefined;
  /**
   * The transport knows this request is a client library's automatic retry of a call the script
   * dropped (the OpenAI and Anthropic SDKs retry a connection that died before an answer): when
   * no entry answers it (a miss or a spent list), it is dropped too, as the dead link would be,
   * rather than answered NOT_FOUND, so the caller sees the connection error the script meant.
   */
  retryOfDrop?: boolean | undefined;
  /** Told about this call when it finishes, like the stub's onCall (per-request logs). */
  onLog?: ((log: CallLog) => void) | undefined;
}
