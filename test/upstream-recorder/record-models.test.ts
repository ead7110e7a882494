import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { startFakeUpstream } from "../support/fake-openai-upstream.js";
import { userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

const answer = { kind: "json" as const, message: { content: "ok" }, finish: "stop" };

/** The ids `GET /v1/models` lists at `httpUrl`. */
async function listed(httpUrl: string): Promise<string[]> {
  const body = (await (await fetch(`${httpUrl}/models`)).json()) as { data: { id: string }[] };
  return body.data.map((m) => m.id);
}

describe("modelstub record, the models the client named", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  it("lists the models requests named as it sees them, writes them as the script's models in first-use order, and the replay lists the same", async () => {
    const upstream = await startFakeUpstream([answer, answer, answer, answer]);
    open.push(upstream);
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(upstream.baseUrl), http: "127.0.0.1:0" });
    open.push(recorder);
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(port);
    expect(await listed(recorder.httpUrl!)).toEqual(["modelstub"]);
    await port.generate(userRequest("one", { model: "gpt-b" }));
    expect(await listed(recorder.httpUrl!)).toEqual(["gpt-b"]);
    await port.generate(userRequest("two", { model: "gpt-a" }));
    await port.generate(userRequest("three", { model: "gpt-b" }));
    // A request naming no model is answered with the default one, which the script keeps as its default.
    const unnamed = await port.generate(userRequest("four", { model: "" }));
    expect(unnamed.model).toBe("modelstub");
    const recorderList = await listed(recorder.httpUrl!);
    expect(recorderList).toEqual(["gpt-b", "gpt-a"]);

    const script = recorder.scriptText();
    const compiled = loadScriptText(script, "recorded.yaml");
    expect(compiled.models.map((m) => m.id)).toEqual(["gpt-b", "gpt-a"]);
    expect(compiled.defaultModel).toBe("modelstub");
    const replay = await startServer({ script, clock: "virtual", http: "127.0.0.1:0" });
    open.push(replay);
    expect(await listed(replay.httpUrl!)).toEqual(recorderList);
    expect(await (await fetch(`${replay.httpUrl!}/models`)).json()).toEqual(await (await fetch(`${recorder.httpUrl!}/models`)).json());
    const replayPort = openGrpcPort(replay.grpcAddress);
    open.push(replayPort);
    for (const [text, model] of [
      ["one", "gpt-b"],
      ["two", "gpt-a"],
      ["three", "gpt-b"],
    ])
      await replayPort.generate(userRequest(text!, { model }));
    expect((await replayPort.generate(userRequest("four", { model: "" }))).model).toBe("modelstub");
  });
});
