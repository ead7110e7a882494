import { CallMethod, Outcome, StreamBreak, type EmbedRequest, type EpisodeCall, type Embedding } from "../../gen/modelstub/v1/episode_pb.js";
import type { Usage } from "../../gen/modelstub/v1/model_pb.js";
import type { CompiledScript } from "../script/compiled-script.js";
import { countTokens } from "../shared/count-tokens.js";
import { deriveEmbedding } from "../shared/derive-embedding.js";
import { Code } from "../shared/status-code.js";
import { defaultEmbedDimensions } from "../shared/embed-limits.js";
import type { EmbedInput, EmbedResult } from "./embed-input.js";
import { encodeEpisodeCall } from "./encode-episode.js";
import type { Session } from "./session.js";

/** Each input's vector: the script's for its text (padded with zeros to the dimensions), else derived; or why not. */
function answerEmbed(script: CompiledScript, request: EmbedRequest): EmbedResult {
  const dimensions = request.dimensions ?? defaultEmbedDimensions;
  const data: Embedding[] = [];
  let tokens = 0;
  for (let i = 0; i < request.input.length; i++) {
    const text = request.input[i]!;
    tokens += countTokens(text);
    const scripted = script.embeddings?.get(text);
    if (scripted && scripted.vector.length > dimensions) {
      const asked = request.dimensions === undefined ? `the default ${dimensions}` : `the ${dimensions} the request asks for`;
      const message = `input[${i}] is answered by the script's ${scripted.ref}, a vector of ${scripted.vector.length} dimensions, more than ${asked}; ask for dimensions ${scripted.vector.length} or more, or give the script a shorter vector`;
      return { kind: "status", status: { code: Code.INVALID_ARGUMENT, message, trailers: [] } };
    }
    let vector: Float32Array;
    if (scripted) {
      vector = new Float32Array(dimensions);
      vector.set(scripted.vector);
    } else {
      vector = deriveEmbedding(text, dimensions);
    }
    data.push({ $typeName: "modelstub.v1.Embedding", embedding: Array.from(vector), entry: scripted?.ref ?? "" });
  }
  const usage: Usage = { $typeName: "modelstub.v1.Usage", inputTokens: tokens, outputTokens: 0, totalTokens: tokens };
  return { kind: "ok", response: { $typeName: "modelstub.v1.EmbedResponse", data }, usage };
}

/**
 * Runs one embeddings call in a session (docs/embeddings.md) and records it in the episode: it
 * takes the next sequence number and no time on the declared timeline (it starts and ends where
 * the timeline stands). Fault plans do not see it: no rule or chaos draw strikes it, and it
 * counts in no step's occurrences. Synchronous: it never waits.
 */
export function runEmbed(session: Session, input: EmbedInput): EmbedResult {
  const journal = session.episode;
  const sequence = ++journal.sequence;
  const startMs = journal.timelineMs;
  input.onStart?.({ sequence, startMs, episode: journal.id });
  const result = answerEmbed(session.script, input.request);
  const status = result.kind === "status" ? result.status : undefined;
  // A complete literal, not create(): see render-reply.ts.
  const call: EpisodeCall = {
    $typeName: "modelstub.v1.EpisodeCall",
    sequence: BigInt(sequence),
    session: session.name,
    method: CallMethod.EMBED,
    stepId: "",
    entry: "",
    request: undefined,
    outcome: status ? Outcome.ERROR : Outcome.OK,
    status: status && { $typeName: "modelstub.v1.CallStatus", code: status.code, message: status.message, trailers: [] },
    response: undefined,
    usage: result.kind === "ok" ? result.usage : undefined,
    chunksSent: 0,
    streamBreak: StreamBreak.UNSPECIFIED,
    startMs: BigInt(startMs),
    endMs: BigInt(startMs),
    fault: undefined,
    sentTextChunks: [],
    embedRequest: input.request,
    embedResponse: result.kind === "ok" ? result.response : undefined,
  };
  journal.record(sequence, encodeEpisodeCall(call, journal.arena.alloc));
  return result;
}
