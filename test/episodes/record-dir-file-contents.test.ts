import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EpisodeCallSchema, EpisodeSchema, FaultKind, Outcome, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { writeEpisodeFile } from "../../src/episode-files/write-episode-file.js";

/*
 * --record-dir writes an episode a piece at a time, so a large one does not hold the loop
 * (issue 27, item 5): its files must still be exactly what toBinary and toJsonString write.
 */

const golden = fromBinary(EpisodeSchema, await readFile(new URL("../golden/scenario.episode.binpb", import.meta.url)));

const cases: [string, Episode][] = [
  ["the golden scenario's episode", golden],
  [
    "an episode under a chaos plan, with unicode and a fault",
    create(EpisodeSchema, {
      session: "s-1",
      calls: [
        create(EpisodeCallSchema, { sequence: 1n, session: "s-1", outcome: Outcome.OK, request: { messages: [{ content: 'héllo \n "quoted" \u0001' }] } }),
        create(EpisodeCallSchema, { sequence: 2n, session: "s-1", outcome: Outcome.ERROR, fault: { rule: "chaos", kind: FaultKind.ERROR, roll: 12 } }),
      ],
      faultPlan: { name: "chaos-ü", digest: "0f".repeat(32), chaosSeed: 2n ** 64n - 1n },
    }),
  ],
  ["an episode of one empty call", create(EpisodeSchema, { session: "e", calls: [create(EpisodeCallSchema, {})] })],
  [
    "an episode of many calls, past a written piece",
    create(EpisodeSchema, {
      session: "many",
      calls: Array.from({ length: 3000 }, (_, i) =>
        create(EpisodeCallSchema, { sequence: BigInt(i + 1), session: "many", request: { messages: [{ content: "y".repeat(1500) }] } }),
      ),
    }),
  ],
];

describe("an episode written to --record-dir", () => {
  it.each(cases)("is byte for byte toBinary's .binpb and toJsonString's .json: %s", async (_, episode) => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-record-"));
    const path = await writeEpisodeFile(dir, episode);
    expect(Buffer.from(await readFile(path)).equals(Buffer.from(toBinary(EpisodeSchema, episode)))).toBe(true);
    expect(await readFile(join(dir, `${episode.session}.episode.json`), "utf8")).toBe(
      `${toJsonString(EpisodeSchema, episode, { prettySpaces: 2, useProtoFieldName: true })}\n`,
    );
  });

  it("is the golden files themselves for the golden scenario", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-record-"));
    await writeEpisodeFile(dir, golden);
    expect(await readFile(join(dir, `${golden.session}.episode.json`), "utf8")).toBe(
      await readFile(new URL("../golden/scenario.episode.json", import.meta.url), "utf8"),
    );
  });
});
