import { writeFile } from "node:fs/promises";
import { it } from "vitest";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/engine/load-script.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { driveScenario, goldenPath, scenarioScript } from "../support/determinism-scenario.js";

// Run by `npm run golden:update` only. The determinism tests compare against what this writes;
// review the diff of the .json beside it before committing.
it("rewrites test/golden/scenario.episode.binpb", async () => {
  const stub = createStub({ script: loadScriptText(scenarioScript, "scenario.yaml") });
  await driveScenario(createInProcessPort(stub), "scenario");
  await writeFile(goldenPath, stub.episodeBytes("scenario"));
  const { toJsonString } = await import("@bufbuild/protobuf");
  const { EpisodeSchema } = await import("../../gen/modelstub/v1/episode_pb.js");
  await writeFile(goldenPath.replace(/\.binpb$/, ".json"), `${toJsonString(EpisodeSchema, stub.episode("scenario"), { prettySpaces: 2, useProtoFieldName: true })}\n`);
});
