import { Code, ModelCallError, type ModelPort } from "../../src/index.js";
import { create } from "@bufbuild/protobuf";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { GenerateRequestSchema, MessageSchema, Role, SamplingParamsSchema, ToolSchema, type Message } from "../../gen/modelstub/v1/model_pb.js";

/** The scenario script's path and text (test/golden/scenario.yaml). */
export const scenarioPath = fileURLToPath(new URL("../golden/scenario.yaml", import.meta.url));
export const scenarioScript = readFileSync(scenarioPath, "utf8");
/** The committed episode of the scenario, session `scenario`. */
export const goldenPath = fileURLToPath(new URL("../golden/scenario.episode.binpb", import.meta.url));

const tools = [
  create(ToolSchema, { name: "bash", description: "Run a shell command", parametersJson: '{"type":"object","properties":{"command":{"type":"string"}}}' }),
  create(ToolSchema, { name: "write", description: "Write a file", parametersJson: '{"type":"object"}' }),
];

function req(messages: Message[], stepId: string) {
  return {
    model: "scenario-model",
    messages,
    tools,
    sampling: create(SamplingParamsSchema, { temperature: 0, maxTokens: 512 }),
    stepId,
  };
}

async function expectCode(p: Promise<unknown>, code: number): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ModelCallError && err.code === code) return;
    throw err;
  }
  throw new Error(`expected status ${code}, got OK`);
}

/**
 * Drives the scenario through a port, one call after another, in `session`. The last call is
 * a hang cut off by a client deadline of `hangDeadlineMs` (default 100 ms).
 */
export async function driveScenario(port: ModelPort, session: string, { hangDeadlineMs = 100 }: { hangDeadlineMs?: number } = {}): Promise<void> {
  const build = (r: ReturnType<typeof req>) => create(GenerateRequestSchema, r);
  const o = { session };
  const convo: Message[] = [
    create(MessageSchema, { role: Role.SYSTEM, content: "You are a careful agent." }),
    create(MessageSchema, { role: Role.USER, content: "Summarize the files here." }),
  ];
  const first = await port.generate(build(req(convo, "plan")), o);
  convo.push(first.message!);
  convo.push(create(MessageSchema, { role: Role.TOOL, content: "a.txt\nb.txt\n", toolCallId: first.message!.toolCalls[0]!.id }));
  const second = await port.generate(build(req(convo, "plan")), o);
  convo.push(second.message!);
  convo.push(create(MessageSchema, { role: Role.USER, content: "Write it to summary.md" }));
  for await (const frame of port.generateStream(build(req(convo, "write")), o)) void frame;
  await expectCode(port.generate(build(req(convo, "flaky")), o), Code.UNAVAILABLE);
  await port.generate(build(req(convo, "flaky")), o);
  await expectCode(port.generate(build(req(convo, "slow")), o), Code.DEADLINE_EXCEEDED);
  await expectCode(port.generate(build(req(convo, "stuck")), { ...o, timeoutMs: hangDeadlineMs }), Code.DEADLINE_EXCEEDED);
}
