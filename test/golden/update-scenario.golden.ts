import { toBinary, toJsonString } from "@bufbuild/protobuf";
import { writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { driveScenario, goldenPath, scenarioScript } from "../support/determinism-scenario.js";

// Run by `npm run golden:update` only. The determinism tests compare against what this writes;
// review the diff of the .json beside it before committing.
it("rewrites test/golden/scenario.episode.binpb", async () => {
  const stub = createStub({ script: loadScriptText(scenarioScript, "scenario.yaml") });
  await driveScenario(createInProcessPort(stub), "scenario");
  const episode = stub.episode("scenario");
  // The golden file is protobuf-es's own encoding of the whole message, not the stub's
  // (encodeEpisode assembles bytes from encoded calls): so comparing the stub's bytes with it
  // pins encodeEpisode. Refuse to write a golden file the stub disagrees with.
  const bytes = toBinary(EpisodeSchema, episode);
  expect(Buffer.from(stub.episodeBytes("scenario")).equals(bytes), "encodeEpisode differs from toBinary(EpisodeSchema, episode)").toBe(true);
  await writeFile(goldenPath, bytes);
  await writeFile(goldenPath.replace(/\.binpb$/, ".json"), `${toJsonString(EpisodeSchema, episode, { prettySpaces: 2, useProtoFieldName: true })}\n`);
});
