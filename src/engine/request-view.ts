import { Role, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import type { CompiledScript, RequestView } from "../script/compiled-script.js";

/** Whether `model` is one `script` lists (GET /v1/models shows the same list), or none at all. */
function listed(model: string, script: CompiledScript): boolean {
  if (model === "") return true;
  if (script.models.length === 0) return model === script.defaultModel;
  for (const m of script.models) if (m.id === model) return true;
  return false;
}

/** Reads a request once into the view matchers and templates use. */
export function viewRequest(req: GenerateRequest, script: CompiledScript): RequestView {
  let lastUser = "";
  let lastToolResult = "";
  let turn = 0;
  const messages = req.messages;
  for (const m of messages) {
    if (m.role === Role.USER) lastUser = m.content;
    else if (m.role === Role.TOOL) lastToolResult = m.content;
    else if (m.role === Role.ASSISTANT) turn++;
  }
  const last = messages[messages.length - 1];
  const lastIsToolResult = last?.role === Role.TOOL;
  let lastToolName = "";
  if (last && lastIsToolResult) {
    lastToolName = last.name;
    if (last.toolCallId) {
      // The tool a result answers is named by the call it points to, not by the result itself:
      // executors often leave the result's name empty.
      outer: for (let i = messages.length - 2; i >= 0; i--) {
        for (const call of messages[i]!.toolCalls) {
          if (call.id === last.toolCallId) {
            lastToolName = call.name;
            break outer;
          }
        }
      }
    }
  }
  return { model: req.model, modelListed: listed(req.model, script), lastUser, messages, lastIsToolResult, lastToolName, lastToolResult, turn };
}
