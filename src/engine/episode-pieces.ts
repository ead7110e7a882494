import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { EpisodeSchema, FaultPlanInfoSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { tagOf } from "../wire/field-tag.js";
import { varintSize, writeVarint } from "../wire/varint.js";

/** The identity of the fault plan an episode ran under, as the episode records it. */
export interface PlanIdentity {
  name: string;
  digest: string;
  seed: bigint | undefined;
}

/**
 * An episode's deterministic bytes as the pieces they are made of, in order: each field's tag and
 * length, and the recorded calls' own bytes (views, not copies: a call's bytes never change once
 * recorded). Concatenated, they are encodeEpisode's bytes. A snapshot: calls recorded later are
 * not in it. Long work on a large episode (an export, a fetch) copies from it a slice at a time
 * (joinPieces, sliceChunks) instead of holding the loop for one copy of the whole.
 */
export interface EpisodePieces {
  pieces: Uint8Array[];
  /** The pieces' lengths summed: the episode's size in bytes. */
  size: number;
  /** How many calls it holds. */
  calls: number;
}

/** Tags of the Episode's fields, from its descriptor (wire/field-tag.ts). */
const sessionTag = tagOf(EpisodeSchema.field.session);
/** The tag before each recorded call's bytes in an Episode. */
export const callTag = tagOf(EpisodeSchema.field.calls);
const planTag = tagOf(EpisodeSchema.field.faultPlan);
const planFields = FaultPlanInfoSchema.field;

/** A tag and a length, as the bytes before a length-delimited field's value. */
export function fieldHead(tag: number, length: number): Uint8Array {
  const head = new Uint8Array(1 + varintSize(length));
  head[0] = tag;
  writeVarint(head, 1, length);
  return head;
}

/** The fault plan's field (PlanIdentity) as a message of its own: a few bytes. */
function encodePlan(identity: PlanIdentity): Uint8Array {
  const w = new BinaryWriter();
  if (identity.name !== "") w.tag(planFields.name.number, WireType.LengthDelimited).string(identity.name);
  if (identity.digest !== "") w.tag(planFields.digest.number, WireType.LengthDelimited).string(identity.digest);
  if (identity.seed !== undefined) w.tag(planFields.chaosSeed.number, WireType.Varint).uint64(identity.seed);
  return w.finish();
}

/**
 * The pieces of an Episode's bytes: field 1 (session, left out when empty), then each call as
 * field 2, length-delimited, in order, then the fault plan (field 3) when there is one; what
 * toBinary(EpisodeSchema, episode) writes (encode-episode.ts says how that is pinned).
 */
export function episodePieces(session: string, calls: readonly Uint8Array[], plan?: PlanIdentity): EpisodePieces {
  const pieces: Uint8Array[] = [];
  const add = (tag: number, value: Uint8Array) => pieces.push(fieldHead(tag, value.length), value);
  if (session !== "") add(sessionTag, Buffer.from(session, "utf8"));
  for (const c of calls) add(callTag, c);
  if (plan !== undefined) add(planTag, encodePlan(plan));
  let size = 0;
  for (const p of pieces) size += p.length;
  return { pieces, size, calls: calls.length };
}

/** The pieces copied into one buffer of `size` bytes, at once. */
export function joinPiecesNow(pieces: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * How many bytes one turn of the event loop copies when a large episode is joined or cut: on a
 * busy 2-core machine copying runs at 1 GB/s or less, so 4 MiB is a few ms of the loop.
 */
export const copySliceBytes = 4 * 1024 * 1024;

/** Lets the loop run what is waiting (I/O, timers, other calls) before going on. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The pieces copied into one buffer of `size` bytes, copySliceBytes per turn of the loop: a
 * 64 MiB episode held the loop 80-400 ms in one copy (more when the response wraps it).
 */
export async function joinPieces(pieces: readonly Uint8Array[], size: number): Promise<Uint8Array> {
  const out = new Uint8Array(size);
  let at = 0;
  let sinceYield = 0;
  for (const p of pieces) {
    for (let from = 0; from < p.length; ) {
      const n = Math.min(p.length - from, copySliceBytes - sinceYield);
      out.set(n === p.length ? p : p.subarray(from, from + n), at);
      at += n;
      from += n;
      sinceYield += n;
      if (sinceYield >= copySliceBytes) {
        sinceYield = 0;
        await yieldToLoop();
      }
    }
  }
  return out;
}

/** Consecutive chunks of at most `chunkBytes` cut from the pieces, each copied when asked for. At least one, empty for no bytes. */
export function* sliceChunks(pieces: readonly Uint8Array[], size: number, chunkBytes: number): Generator<Uint8Array> {
  let piece = 0;
  let from = 0;
  for (let done = 0; done === 0 || done < size; ) {
    const chunk = new Uint8Array(Math.min(chunkBytes, size - done));
    for (let at = 0; at < chunk.length; ) {
      const p = pieces[piece]!;
      const n = Math.min(p.length - from, chunk.length - at);
      chunk.set(p.subarray(from, from + n), at);
      at += n;
      from += n;
      if (from === p.length) {
        piece++;
        from = 0;
      }
    }
    done += chunk.length;
    yield chunk;
    if (size === 0) return;
  }
}
