import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CallMethod, EpisodeCallSchema, EpisodeSchema, FaultKind, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { encodeEpisode, encodeEpisodeCall } from "../../src/engine/encode-episode.js";

const calls = [
  create(EpisodeCallSchema, { sequence: 1n, session: "sessión-ü", method: CallMethod.GENERATE, request: {}, outcome: Outcome.OK }),
  create(EpisodeCallSchema, { sequence: 2n, session: "sessión-ü", outcome: Outcome.ERROR, fault: { rule: "rules[0]", kind: FaultKind.ERROR } }),
  create(EpisodeCallSchema, {
    sequence: 3n,
    session: "sessión-ü",
    outcome: Outcome.TIMED_OUT,
    fault: { rule: "chaos", kind: FaultKind.TIMEOUT, roll: 999_999 },
  }),
];

describe("an episode's bytes under a fault plan", () => {
  it("are what toBinary writes for the whole episode, with and without the fault plan it ran under", () => {
    const encoded = calls.map((c) => encodeEpisodeCall(c));
    const plans = [
      undefined,
      { name: "unavailable-at-plan", digest: "ab".repeat(32), seed: undefined },
      { name: "", digest: "", seed: 0n },
      { name: "chaos-ü", digest: "0f".repeat(32), seed: 2n ** 64n - 1n },
    ];
    for (const plan of plans) {
      const episode = create(EpisodeSchema, {
        session: "sessión-ü",
        calls,
        faultPlan: plan && { name: plan.name, digest: plan.digest, ...(plan.seed === undefined ? {} : { chaosSeed: plan.seed }) },
      });
      expect(Buffer.from(encodeEpisode("sessión-ü", encoded, plan)).equals(Buffer.from(toBinary(EpisodeSchema, episode)))).toBe(true);
    }
  });
});
