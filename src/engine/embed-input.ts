import type { EmbedRequest, EmbedResponse } from "../../gen/modelstub/v1/episode_pb.js";
import type { Usage } from "../../gen/modelstub/v1/model_pb.js";
import type { CallStatus } from "../script/compiled-script.js";

/** One embeddings call as a transport hands it to the engine (Stub.embed). */
export interface EmbedInput {
  /** Session name; checked as a model call's is. */
  session: string;
  request: EmbedRequest;
  /** Told once the call has its sequence number, as CallInput.onStart (the episode's id for x-modelstub-episode). */
  onStart?: ((start: { sequence: number; startMs: number; episode?: string }) => void) | undefined;
}

/** How an embeddings call ended: its vectors and usage, or a status (refused, or answered with one). */
export type EmbedResult = { kind: "ok"; response: EmbedResponse; usage: Usage } | { kind: "status"; status: CallStatus };
