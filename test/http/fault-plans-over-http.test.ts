import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { loadFaultPlanText } from "../../src/script/load-fault-plan.js";
import { startHttpStub, type HttpStub } from "./http-stub.js";

const script = 'steps:\n  plan:\n    - reply: "plan it"\n';
const body: OpenAI.ChatCompletionCreateParamsNonStreaming = { model: "m", messages: [{ role: "user", content: "go" }] };

let http: HttpStub | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

describe("a fault plan over the OpenAI-compatible HTTP front", () => {
  it("answers the planned failure as an HTTP error, and the SDK's own retry gets the script's reply", async () => {
    http = await startHttpStub(script);
    const plan = loadFaultPlanText("rules: [{ at: { step: plan }, error: { code: UNAVAILABLE, message: planned } }]", "p.yaml");
    await http.stub.setFaultPlan("agent", plan);
    const failed = await http
      .client({ session: "agent", step: "plan" })
      .chat.completions.create(body)
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect([(failed as InstanceType<typeof OpenAI.APIError>).status, (failed as InstanceType<typeof OpenAI.APIError>).message]).toEqual([503, "503 planned"]);
    const answer = await http.client({ session: "agent", step: "plan" }).chat.completions.create(body);
    expect(answer.choices[0]!.message.content).toBe("plan it");
    expect(http.stub.episode("agent").calls.map((c) => c.fault?.rule ?? "")).toEqual(["rules[0]", ""]);
  });
});
