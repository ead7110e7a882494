import { create } from "@bufbuild/protobuf";
import { afterEach } from "vitest";
import { MessageSchema, Role, ToolCallSchema, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import type { ModelPort } from "../../src/index.js";
import { userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

/** Ports over a script, by gRPC or in process, for the tests of what a script answers. */

let server: StubServer | undefined;

/** Closes the server grpcPort() started, after each test of the calling file. */
export function closeServerAfterEach(): void {
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
}

export async function grpcPort(script: string): Promise<ModelPort> {
  server = await startStubServer(script);
  return server.port;
}

export function inProcess(script: string): ModelPort {
  return createInProcessPort(createStub({ script: loadScriptText(script, "test.yaml") }));
}

export const text = async (p: Promise<{ message?: { content: string } | undefined }>) => (await p).message?.content;

export function toolTurn(user: string, tool: string, output: string, callId = "c1"): GenerateRequest {
  return userRequest(user, {
    messages: [
      create(MessageSchema, { role: Role.USER, content: user }),
      create(MessageSchema, { role: Role.ASSISTANT, toolCalls: [create(ToolCallSchema, { id: callId, name: tool, arguments: "{}" })] }),
      create(MessageSchema, { role: Role.TOOL, content: output, toolCallId: callId }),
    ],
  });
}
