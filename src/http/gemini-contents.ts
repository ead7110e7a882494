import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { MessageSchema, Role, ToolCallSchema, type Message, type ToolCall } from "../../gen/modelstub/v1/model_pb.js";
import { quoteClipped } from "../shared/clip-text.js";
import { invalid, isObject, missing, objectAt, optional, stringAt, wrongType, type Obj } from "./refusal.js";

// Gemini `contents[]` (and `systemInstruction`) as the engine's messages: the same messages chat
// completions, Anthropic Messages and a gRPC client send for the same conversation.

/** Part fields that carry what modelstub cannot read: media, and code a server would run. */
const unreadParts = ["inlineData", "fileData", "executableCode", "codeExecutionResult", "toolCall", "toolResponse"];

/** The one kind of data a part carries; a part must carry one. */
function partKind(p: Obj, param: string): "text" | "functionCall" | "functionResponse" {
  for (const k of unreadParts) {
    if (p[k] !== undefined && p[k] !== null)
      invalid(`${param}.${k}`, "modelstub reads text, functionCall and functionResponse parts only (media and server-run code are not simulated)");
  }
  if (p["functionCall"] !== undefined && p["functionCall"] !== null) return "functionCall";
  if (p["functionResponse"] !== undefined && p["functionResponse"] !== null) return "functionResponse";
  if (p["text"] !== undefined && p["text"] !== null) return "text";
  return missing(`${param}.text`, "a part carries text, a functionCall or a functionResponse");
}

/** A text part's text. */
function textOf(p: Obj, param: string): string {
  return stringAt(p["text"], `${param}.text`);
}

/**
 * A functionCall part as the engine's tool call: `args` written as JSON, as a gRPC client writes a
 * mapping. No `id` (a client that drops the ids modelstub gave) is the empty id: a result then
 * names its call by `name` (see toolResultOf).
 */
function toolCallOf(v: unknown, param: string): ToolCall {
  const c = objectAt(v, param);
  if (c["name"] === undefined || c["name"] === null) missing(`${param}.name`, "the function's name");
  const name = stringAt(c["name"], `${param}.name`);
  const id = optional(c, "id", stringAt, `${param}.id`) ?? "";
  const args = optional(c, "args", objectAt, `${param}.args`) ?? {};
  return create(ToolCallSchema, { id, name, arguments: JSON.stringify(args) });
}

/**
 * A functionResponse's `response` as the tool result's text. Gemini reads `output` as the
 * function's output, and the whole object when it has neither `output` nor `error`: a response
 * that is `{"output": <a string>}` and nothing else is that string (what the other dialects send
 * as a tool's text), anything else its JSON, so nothing the client said is lost.
 */
function resultText(response: Obj): string {
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response["output"] === "string") return response["output"];
  return JSON.stringify(response);
}

/**
 * A functionResponse part as a Role.TOOL message. With an `id` (modelstub answers every call with
 * one, and the SDK sends it back) the result points to its call, as in every dialect, and carries
 * no name of its own; without one, it carries the function's `name`, which the engine reads as
 * the tool a result answers when it points to no call.
 */
function toolResultOf(v: unknown, param: string): Message {
  const r = objectAt(v, param);
  if (r["name"] === undefined || r["name"] === null) missing(`${param}.name`, "the name of the function this answers");
  const name = stringAt(r["name"], `${param}.name`);
  const id = optional(r, "id", stringAt, `${param}.id`);
  if (r["response"] === undefined || r["response"] === null) missing(`${param}.response`, 'the function\'s result, an object like {"output": "..."}');
  const content = resultText(objectAt(r["response"], `${param}.response`));
  return create(MessageSchema, id ? { role: Role.TOOL, content, toolCallId: id } : { role: Role.TOOL, content, name });
}

/** A content's parts, which it must have. */
function partsOf(c: Obj, param: string): unknown[] {
  if (c["parts"] === undefined || c["parts"] === null) missing(`${param}.parts`, 'a list of parts, like [{"text":"hi"}]');
  const parts = c["parts"];
  if (!Array.isArray(parts)) wrongType(`${param}.parts`, "a list of parts", parts);
  if (parts.length === 0) invalid(`${param}.parts`, "expected at least one part");
  return parts;
}

/** A user content: its function responses first, one message each in order, then its text if it has any (Anthropic's rule, chat completions' order). */
function userContent(parts: unknown[], param: string): Message[] {
  const out: Message[] = [];
  const texts: string[] = [];
  parts.forEach((x, i) => {
    const p = `${param}.parts[${i}]`;
    const part = objectAt(x, p);
    const kind = partKind(part, p);
    if (kind === "text") texts.push(textOf(part, p));
    else if (kind === "functionResponse") out.push(toolResultOf(part["functionResponse"], `${p}.functionResponse`));
    else invalid(`${p}.functionCall`, 'a functionCall belongs in a content of role "model"');
  });
  if (texts.length > 0) out.push(create(MessageSchema, { role: Role.USER, content: texts.join("") }));
  return out;
}

/** A model content: its text joined (thought parts left out), its function calls as tool calls. */
function modelContent(parts: unknown[], param: string): Message {
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  parts.forEach((x, i) => {
    const p = `${param}.parts[${i}]`;
    const part = objectAt(x, p);
    const kind = partKind(part, p);
    // Thoughts are the model's own; the engine has no reasoning to match or replay.
    if (kind === "text" && part["thought"] !== true) texts.push(textOf(part, p));
    else if (kind === "functionCall") calls.push(toolCallOf(part["functionCall"], `${p}.functionCall`));
    else if (kind === "functionResponse") invalid(`${p}.functionResponse`, 'a functionResponse belongs in a content of role "user"');
  });
  const init: MessageInitShape<typeof MessageSchema> = { role: Role.ASSISTANT, content: texts.join("") };
  if (calls.length > 0) init.toolCalls = calls;
  return create(MessageSchema, init);
}

/** The engine messages of one entry of `contents[]`. A content without a role is the user's, as Gemini reads it. */
export function contentMessages(v: unknown, param: string): Message[] {
  const c = objectAt(v, param);
  const role = optional(c, "role", stringAt, `${param}.role`) ?? "user";
  if (role !== "user" && role !== "model") invalid(`${param}.role`, `expected "user" or "model", got ${quoteClipped(role)}`);
  const parts = partsOf(c, param);
  return role === "user" ? userContent(parts, param) : [modelContent(parts, param)];
}

/** `systemInstruction`: a content whose text parts, joined with nothing between them, are the system prompt. */
export function systemText(v: unknown, param: string): string {
  const c = objectAt(v, param);
  return partsOf(c, param)
    .map((x, i) => {
      const p = `${param}.parts[${i}]`;
      const part = objectAt(x, p);
      if (partKind(part, p) !== "text") invalid(p, "a system instruction holds text parts only");
      return textOf(part, p);
    })
    .join("");
}

/** How many engine messages a content makes, and its function calls: for the request limits, before anything is built (see userContent). */
export function contentCounts(v: unknown): { messages: number; toolCalls: number } {
  const parts = isObject(v) && Array.isArray(v["parts"]) ? v["parts"] : [];
  let responses = 0;
  let texts = 0;
  let toolCalls = 0;
  for (const p of parts) {
    if (!isObject(p)) continue;
    if (isObject(p["functionResponse"])) responses++;
    else if (isObject(p["functionCall"])) toolCalls++;
    else texts++;
  }
  const user = !isObject(v) || v["role"] !== "model";
  return { messages: user ? responses + (texts > 0 ? 1 : 0) : 1, toolCalls };
}
