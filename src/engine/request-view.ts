import { Role, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import type { RequestView } from "../script/compiled-script.js";

/** Reads a request once into the view matchers and templates use. */
export function viewRequest(req: GenerateRequest): RequestView {
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
  return { model: req.model, lastUser, lastIsToolResult, lastToolName, lastToolResult, turn };
}
