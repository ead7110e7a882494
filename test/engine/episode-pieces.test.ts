import { describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { EpisodeCallSchema, EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { decodeEpisode, decodeEpisodeInSlices, encodeEpisode, encodeEpisodeCall } from "../../src/engine/encode-episode.js";
import { copySliceBytes, episodePieces, joinPieces, sliceChunks } from "../../src/engine/episode-pieces.js";

/*
 * Long work on a large episode copies it from its pieces a slice at a time (issue 27, item 5):
 * whichever way it is cut, the bytes are encodeEpisode's.
 */

const calls = [new Uint8Array(300).fill(1), new Uint8Array(0), new Uint8Array(copySliceBytes + 5).fill(2), new Uint8Array(70_000).fill(3)];
const plan = { name: "calm", digest: "ab".repeat(32), seed: 7n };

describe("an episode's pieces", () => {
  it("join, a slice per turn of the loop, into encodeEpisode's bytes", async () => {
    const e = episodePieces("alice", calls, plan);
    const joined = await joinPieces(e.pieces, e.size);
    expect(e.calls).toBe(4);
    expect(Buffer.from(joined).equals(Buffer.from(encodeEpisode("alice", calls, plan)))).toBe(true);
  });

  it.each([1, 7, 4096, 1024 * 1024, 64 * 1024 * 1024])("cut into chunks of at most %i bytes that concatenate to encodeEpisode's bytes", (chunkBytes) => {
    // Byte-sized chunks of a small episode; the large call for the others.
    const some = chunkBytes < 4096 ? calls.filter((c) => c.length < 100_000) : calls;
    const e = episodePieces("alice", some, plan);
    const chunks = [...sliceChunks(e.pieces, e.size, chunkBytes)];
    expect(chunks.every((c) => c.length <= chunkBytes)).toBe(true);
    expect(chunks.slice(0, -1).every((c) => c.length === chunkBytes)).toBe(true);
    expect(Buffer.concat(chunks).equals(Buffer.from(encodeEpisode("alice", some, plan)))).toBe(true);
  });

  it("of no bytes at all are one empty chunk", () => {
    const e = episodePieces("", []);
    expect(e.size).toBe(0);
    expect([...sliceChunks(e.pieces, e.size, 1024)]).toEqual([new Uint8Array(0)]);
  });
});

describe("an episode decoded in slices", () => {
  const recorded = Array.from({ length: 40 }, (_, i) =>
    encodeEpisodeCall(create(EpisodeCallSchema, { sequence: BigInt(i + 1), session: "s", request: { messages: [{ content: "z".repeat(300_000) }] } })),
  );
  it.each([undefined, plan, { name: "", digest: "", seed: undefined }])("is decodeEpisode's message (plan %o)", async (p) => {
    const sliced = await decodeEpisodeInSlices("s", recorded, p);
    expect(Buffer.from(toBinary(EpisodeSchema, sliced)).equals(Buffer.from(toBinary(EpisodeSchema, decodeEpisode("s", recorded, p))))).toBe(true);
    expect(sliced).toEqual(decodeEpisode("s", recorded, p));
  });
});
