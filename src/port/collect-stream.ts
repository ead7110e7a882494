import { create } from "@bufbuild/protobuf";
import {
  GenerateResponseSchema,
  MessageSchema,
  Role,
  ToolCallSchema,
  type GenerateResponse,
  type GenerateStreamResponse,
} from "../../gen/modelstub/v1/model_pb.js";
import { Code } from "../shared/status-code.js";
import { ModelCallError } from "./model-port.js";

/**
 * Collects a GenerateStream into the GenerateResponse Generate answers for the same reply: the
 * text deltas joined into the assistant message's content, each tool call's deltas (by index)
 * joined into one ToolCall (id and name from its first delta, arguments concatenated), and the
 * final frame's finish reason and usage; id and model from the frames. A stream that ends with
 * an error status rejects with its ModelCallError, as the stream does; one that ends without a
 * final frame rejects with DATA_LOSS (a scripted `break: {then: drop}` does that).
 */
export async function collectStream(frames: AsyncIterable<GenerateStreamResponse>): Promise<GenerateResponse> {
  let id = "";
  let model = "";
  let content = "";
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const f of frames) {
    id ||= f.id;
    model ||= f.model;
    switch (f.frame.case) {
      case "textDelta":
        content += f.frame.value;
        break;
      case "toolCallDelta": {
        const d = f.frame.value;
        const call = (calls[d.index] ??= { id: d.id, name: d.name, arguments: "" });
        call.id ||= d.id;
        call.name ||= d.name;
        call.arguments += d.arguments;
        break;
      }
      case "final":
        return create(GenerateResponseSchema, {
          id,
          model,
          message: create(MessageSchema, {
            role: Role.ASSISTANT,
            content,
            toolCalls: calls.filter((c) => c !== undefined).map((c) => create(ToolCallSchema, c)),
          }),
          finishReason: f.frame.value.finishReason,
          ...(f.frame.value.usage ? { usage: f.frame.value.usage } : {}),
        });
      default:
        break;
    }
  }
  throw new ModelCallError(Code.DATA_LOSS, "the stream ended without its final frame");
}
