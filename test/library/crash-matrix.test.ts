import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CallMethod, crashMatrix, crashMatrixSize, EpisodeCallSchema, EpisodeSchema, loadScript, matrixPositions, ScriptError } from "../../src/index.js";

/* crashMatrix() from the package's entry: any script source, positions from an episode or a text. */

const yaml = "entries:\n  - reply: hello\nsteps:\n  plan:\n    - reply: first\n      times: 2\n";
const episode = create(EpisodeSchema, {
  calls: [
    create(EpisodeCallSchema, { sequence: 1n, stepId: "plan", method: CallMethod.GENERATE }),
    create(EpisodeCallSchema, { sequence: 2n, stepId: "", method: CallMethod.GENERATE_STREAM }),
  ],
});

describe("crashMatrix", () => {
  it("crosses every call the script answers with UNAVAILABLE and timeout by default, from text or a compiled script alike", () => {
    const plans = crashMatrix(yaml);
    expect(plans.map((p) => p.name)).toEqual([
      "main list, 1st call: UNAVAILABLE",
      "main list, 1st call: timeout",
      'step "plan", 1st call: UNAVAILABLE',
      'step "plan", 1st call: timeout',
      'step "plan", 2nd call: UNAVAILABLE',
      'step "plan", 2nd call: timeout',
    ]);
    expect(crashMatrix(loadScript(yaml))).toEqual(plans);
    expect(crashMatrixSize(yaml, { pairs: true })).toBe(crashMatrix(yaml, { pairs: true }).length);
  });

  it("takes an episode's positions, decoded or as bytes", () => {
    expect(matrixPositions(toBinary(EpisodeSchema, episode))).toEqual(matrixPositions(episode));
    expect(crashMatrix(yaml, { episode: toBinary(EpisodeSchema, episode), kinds: ["drop"] }).map((p) => p.name)).toEqual([
      "main list, 1st call: stream dropped after 1 chunk",
    ]);
  });

  it("picks positions among an episode's calls when given both", () => {
    expect(crashMatrix(yaml, { episode, positions: ":1", kinds: ["drop", "hang"] }).map((p) => p.name)).toEqual([
      "main list, 1st call: stream dropped after 1 chunk",
      "main list, 1st call: hang",
    ]);
    expect(() => crashMatrix(yaml, { episode, positions: "plan:2" })).toThrow('the episode has no call plan:2: it made 1 call on step "plan"');
  });

  it("takes positions as text, and refuses a step the script has not", () => {
    expect(crashMatrix(yaml, { positions: "plan:2", kinds: ["hang"] })[0]!.plan.rules).toEqual([{ at: { step: "plan", occurrence: 2 }, hang: true }]);
    expect(() => crashMatrix(yaml, { positions: "act:1" })).toThrow('crashMatrix: the script "<script>" has no step "act"');
  });

  it("throws a ScriptError for an invalid script", () => {
    expect(() => crashMatrix("entries:\n  - repy: hi\n")).toThrow(ScriptError);
  });
});
