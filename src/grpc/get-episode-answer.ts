import { GetEpisodeResponseSchema } from "../../gen/modelstub/v1/control_pb.js";
import { fieldHead, joinPieces, type EpisodePieces } from "../engine/episode-pieces.js";
import { Code } from "../shared/status-code.js";
import { StatusError } from "../shared/status-error.js";
import { tagOf } from "../wire/field-tag.js";

// Tags (field number << 3 | wire type), from the descriptor (wire/field-tag.ts).
const EPISODE = tagOf(GetEpisodeResponseSchema.field.episode);
const EPISODE_BINPB = tagOf(GetEpisodeResponseSchema.field.episodeBinpb);

/**
 * The largest answer GetEpisode gives: 32 MiB. grpc-js copies a unary answer into one gRPC frame
 * in a single synchronous step, about 0.5 ms per MB of the loop's CPU here: a 60 MiB episode's
 * answer (the episode twice, 120 MB) held every session's calls 60-130 ms. Past this the server
 * refuses, RESOURCE_EXHAUSTED naming ExportEpisode, which streams any episode in 1 MiB chunks
 * and never holds the loop so. Clients accept 4 MiB by default, so an answer this large was only
 * ever read by one that raised its limit.
 */
export const getEpisodeMaxBytes = 32 * 1024 * 1024;

/** The pieces of GetEpisode's answer (see getEpisodeResponseBytes) and their size. */
function getEpisodeResponsePieces(e: EpisodePieces, withEpisode: boolean): { pieces: Uint8Array[]; size: number } {
  const pieces: Uint8Array[] = [];
  // A set message field is written even when empty; empty bytes (proto3's zero value) are not.
  if (withEpisode) pieces.push(fieldHead(EPISODE, e.size), ...e.pieces);
  if (e.size > 0) pieces.push(fieldHead(EPISODE_BINPB, e.size), ...e.pieces);
  let size = 0;
  for (const p of pieces) size += p.length;
  return { pieces, size };
}

/**
 * A GetEpisodeResponse's bytes from the episode's pieces: field 1, the Episode message, is exactly
 * the episode's deterministic bytes (what toBinary of the decoded episode writes), and field 2 is
 * the same bytes again. Decoding a 64 MiB episode to have toBinary encode it back held the loop
 * about a second; this copies the pieces, a slice per turn of the loop (joinPieces). Byte for
 * byte what toBinary(GetEpisodeResponseSchema, {episode, episodeBinpb}) writes
 * (test/grpc/get-episode-bytes.test.ts). grpc-js still copies the answer into its frame at once,
 * hence getEpisodeMaxBytes.
 */
export async function getEpisodeResponseBytes(e: EpisodePieces, withEpisode: boolean): Promise<Uint8Array> {
  const { pieces, size } = getEpisodeResponsePieces(e, withEpisode);
  return joinPieces(pieces, size);
}

/** Why GetEpisode refuses an answer past getEpisodeMaxBytes, or undefined when it fits. */
export function getEpisodeTooLarge(session: string, e: EpisodePieces, withEpisode: boolean): StatusError | undefined {
  const { size } = getEpisodeResponsePieces(e, withEpisode);
  if (size <= getEpisodeMaxBytes) return undefined;
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return new StatusError({
    code: Code.RESOURCE_EXHAUSTED,
    message:
      `the episode of session ${JSON.stringify(session)} is ${e.size} bytes (${mib(e.size)}), and GetEpisode's answer${withEpisode ? " (the episode twice; bytes_only halves it)" : ""} would be ${mib(size)}, ` +
      `over the ${mib(getEpisodeMaxBytes)} it answers at most: fetch it with ExportEpisode, which streams it in chunks of 1 MiB (\`modelstub episode\`, the control client's exportEpisode)`,
    trailers: [],
  });
}
