import { create, toBinary } from "@bufbuild/protobuf";
import { lstat, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EpisodeCallSchema, EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { GenerateResponseSchema, MessageSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { createEpisodeWriter } from "../../src/episode-files/create-episode-writer.js";
import { writeEpisodeFile } from "../../src/episode-files/write-episode-file.js";

/*
 * --record-dir wrote every episode through one temp name per session, without a queue: two
 * closes of one session in flight wrote into the same temp file (a torn or missing file), and
 * a big older episode could finish after a small newer one (a stale file).
 */

function episode(session: string, calls: number, textBytes: number): Episode {
  const text = "x".repeat(textBytes);
  return create(EpisodeSchema, {
    session,
    calls: Array.from({ length: calls }, (_, i) =>
      create(EpisodeCallSchema, {
        sequence: BigInt(i + 1),
        session,
        response: create(GenerateResponseSchema, { id: `gen-${session}-${i + 1}`, message: create(MessageSchema, { role: Role.ASSISTANT, content: text }) }),
      }),
    ),
  });
}

const big = episode("w", 200, 40_000); // about 8 MB: slow to write
const small = episode("w", 1, 10);

describe("createEpisodeWriter()", () => {
  it("leaves the episode queued last in the file, however much longer the earlier one takes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-writer-"));
    const writer = createEpisodeWriter(dir);
    const writes = [writer.write(big), writer.write(small)];
    await writer.settled();
    expect(await Promise.all(writes)).toEqual([join(dir, "w.episode.binpb"), join(dir, "w.episode.binpb")]);
    expect(Buffer.from(await readFile(join(dir, "w.episode.binpb")))).toEqual(Buffer.from(toBinary(EpisodeSchema, small)));
    expect(JSON.parse(await readFile(join(dir, "w.episode.json"), "utf8")).calls).toHaveLength(1);
    expect((await readdir(dir)).sort()).toEqual([".episodes", "w.episode.binpb", "w.episode.json"]);
    // One folder, the episode's, and the link naming it: nothing left of the first write.
    expect((await readdir(join(dir, ".episodes"))).length).toBe(2);
  });

  it("rejects a write that fails and still runs the writes queued behind it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-writer-"));
    const writer = createEpisodeWriter(join(dir, "\0bad"));
    await expect(writer.write(small)).rejects.toThrow();
    const good = createEpisodeWriter(dir);
    await expect(good.write(small)).resolves.toBe(join(dir, "w.episode.binpb"));
  });
});

describe("writeEpisodeFile()", () => {
  it("never shares a temp file between two writes in flight: both succeed and the file is one of them, whole", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-writer-"));
    await Promise.all([writeEpisodeFile(dir, big), writeEpisodeFile(dir, small)]);
    const written = Buffer.from(await readFile(join(dir, "w.episode.binpb")));
    // Buffer.equals: a deep equality over 8 MB takes seconds.
    const whole = [big, small].map((e) => written.equals(toBinary(EpisodeSchema, e)));
    expect(whole).toContain(true);
    expect((await readdir(dir)).sort()).toEqual([".episodes", "w.episode.binpb", "w.episode.json"]);
  });
});

describe("writeEpisodeFile() in a directory an earlier version wrote", () => {
  it("takes over its plain .binpb and .json: the names become links to the new pair", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-writer-"));
    await writeFile(join(dir, "w.episode.binpb"), toBinary(EpisodeSchema, big));
    await writeFile(join(dir, "w.episode.json"), "{}\n");
    await writeEpisodeFile(dir, small);
    expect(Buffer.from(await readFile(join(dir, "w.episode.binpb")))).toEqual(Buffer.from(toBinary(EpisodeSchema, small)));
    expect(JSON.parse(await readFile(join(dir, "w.episode.json"), "utf8")).calls).toHaveLength(1);
    expect([(await lstat(join(dir, "w.episode.binpb"))).isSymbolicLink(), (await lstat(join(dir, "w.episode.json"))).isSymbolicLink()]).toEqual([true, true]);
    expect((await readdir(join(dir, ".episodes"))).length).toBe(2);
  });
});
