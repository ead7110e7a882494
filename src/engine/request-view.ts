import { Role, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";

/** What matchers and templates read of a request, computed once per call in one pass. */
export interface RequestView {
  model: string;
  /** Text of the last user message ("" when there is none). */
  lastUser: string;
  /** Whether the last message of the conversation is a tool result. */
  lastIsToolResult: boolean;
  /** The tool the last message answers: the name of the call its id points to, else its name. */
  lastToolName: string;
  /** Text of the last tool result anywhere in the conversation ("" when there is none). */
  lastToolResult: string;
  /** Number of assistant messages so far: 0 on the first call of a conversation. */
  turn: number;
}

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
