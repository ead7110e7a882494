import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { quoteClipped } from "../shared/clip-text.js";
import { MessageSchema, Role, ToolCallSchema, type Message, type ToolCall } from "../../gen/modelstub/v1/model_pb.js";
import { invalid, missing, objectAt, stringAt, wrongType, type Obj } from "./refusal.js";

// How parseAnthropicRequest (parse-anthropic-request.ts) reads `system` and `messages[]`: each
// Anthropic turn becomes the messages chat completions sends for the same conversation, so both
// dialects build the same GenerateRequest.

/** Blocks of assistant history that carry nothing the engine reads: accepted and left out. */
const ignoredAssistantBlocks = new Set(["thinking", "redacted_thinking"]);

/** What each place may hold, for the refusal of a block it may not. */
const readable: Record<string, string> = {
  user: "text and tool_result blocks in a user turn",
  assistant: "text, tool_use, thinking and redacted_thinking blocks in an assistant turn",
  system: "text blocks in a system prompt",
  tool_result: "text blocks in a tool_result's content",
};

/** Refuses a block type modelstub cannot honour where it stands. */
function unsupportedBlock(param: string, type: string, where: string): never {
  invalid(param, `modelstub reads ${readable[where]}, not ${quoteClipped(type)} (images, documents and server tools are not simulated)`);
}

/** The type of a content block, which every block must name. */
function blockType(b: Obj, param: string): string {
  if (b["type"] === undefined) missing(`${param}.type`, 'the block\'s type, like "text"');
  return stringAt(b["type"], `${param}.type`);
}

/** A text block's text. */
function textOf(b: Obj, param: string): string {
  if (b["text"] === undefined) missing(`${param}.text`, "the block's text");
  return stringAt(b["text"], `${param}.text`);
}

/**
 * Text that is a string or a list of text blocks, joined with nothing between them: the rule of
 * chat completions' text parts, so the same blocks make the same content in both dialects.
 */
export function textContentAt(v: unknown, param: string, where: "system" | "tool_result"): string {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) wrongType(param, "a string or a list of text blocks", v);
  return v
    .map((x, i) => {
      const b = objectAt(x, `${param}[${i}]`);
      const type = blockType(b, `${param}[${i}]`);
      if (type !== "text") unsupportedBlock(`${param}[${i}].type`, type, where);
      return textOf(b, `${param}[${i}]`);
    })
    .join("");
}

/**
 * A tool_use block as the engine's tool call: `input` written as JSON, as a gRPC client writes a
 * mapping (so arguments a script wrote as JSON text with spaces come back without them).
 */
function toolCallOf(b: Obj, param: string): ToolCall {
  if (b["id"] === undefined) missing(`${param}.id`, "the id of the tool call");
  if (b["name"] === undefined) missing(`${param}.name`, "the tool's name");
  if (b["input"] === undefined) missing(`${param}.input`, "the tool's input, an object");
  // Any JSON value: modelstub answers a script's arguments that are a JSON list or string as that value (anthropic-wire.ts, inputOf).
  return create(ToolCallSchema, { id: stringAt(b["id"], `${param}.id`), name: stringAt(b["name"], `${param}.name`), arguments: JSON.stringify(b["input"]) });
}

/**
 * A tool_result block as a Role.TOOL message. `is_error` is read but not carried: the engine's
 * message has no field for it, and chat completions cannot say it either.
 */
function toolResultOf(b: Obj, param: string): Message {
  if (b["tool_use_id"] === undefined) missing(`${param}.tool_use_id`, "the id of the tool_use block this result answers");
  const toolCallId = stringAt(b["tool_use_id"], `${param}.tool_use_id`);
  if (b["is_error"] !== undefined && typeof b["is_error"] !== "boolean") wrongType(`${param}.is_error`, "true or false", b["is_error"]);
  // No content is an empty result, as Anthropic reads it.
  const content = b["content"] === undefined || b["content"] === null ? "" : textContentAt(b["content"], `${param}.content`, "tool_result");
  return create(MessageSchema, { role: Role.TOOL, content, toolCallId });
}

/** A user turn: its tool results first, one message each in order, then its text if it has any. */
function userTurn(content: unknown[], param: string): Message[] {
  if (content.length === 0) invalid(param, "a user turn needs at least one content block");
  const results: Message[] = [];
  const texts: string[] = [];
  content.forEach((x, i) => {
    const p = `${param}[${i}]`;
    const b = objectAt(x, p);
    const type = blockType(b, p);
    if (type === "text") texts.push(textOf(b, p));
    else if (type === "tool_result") results.push(toolResultOf(b, p));
    else unsupportedBlock(`${p}.type`, type, "user");
  });
  // Chat completions sends the tool messages, then a user message: the same order here.
  if (texts.length > 0) results.push(create(MessageSchema, { role: Role.USER, content: texts.join("") }));
  return results;
}

/** An assistant turn: its text joined, its tool_use blocks as tool calls; thinking left out. */
function assistantTurn(content: unknown[], param: string): Message {
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  content.forEach((x, i) => {
    const p = `${param}[${i}]`;
    const b = objectAt(x, p);
    const type = blockType(b, p);
    if (type === "text") texts.push(textOf(b, p));
    else if (type === "tool_use") calls.push(toolCallOf(b, p));
    // The engine has no reasoning to match or replay: the blocks are Anthropic's to verify.
    else if (!ignoredAssistantBlocks.has(type)) unsupportedBlock(`${p}.type`, type, "assistant");
  });
  const init: MessageInitShape<typeof MessageSchema> = { role: Role.ASSISTANT, content: texts.join("") };
  if (calls.length > 0) init.toolCalls = calls;
  return create(MessageSchema, init);
}

/** The engine messages of one entry of `messages[]`: one, or a user turn's tool results and text. */
export function turnMessages(v: unknown, param: string): Message[] {
  const m = objectAt(v, param);
  if (m["role"] === undefined) missing(`${param}.role`, "user or assistant");
  const role = stringAt(m["role"], `${param}.role`);
  if (role !== "user" && role !== "assistant" && role !== "system")
    invalid(`${param}.role`, `expected user or assistant (or system), got ${quoteClipped(role)}`);
  if (m["content"] === undefined || m["content"] === null) missing(`${param}.content`, "a string or a list of content blocks");
  const content = m["content"];
  const at = `${param}.content`;
  if (role === "system") return [create(MessageSchema, { role: Role.SYSTEM, content: textContentAt(content, at, "system") })];
  if (typeof content === "string") return [create(MessageSchema, { role: role === "user" ? Role.USER : Role.ASSISTANT, content })];
  if (!Array.isArray(content)) wrongType(at, "a string or a list of content blocks", content);
  return role === "user" ? userTurn(content, at) : [assistantTurn(content, at)];
}

/**
 * How many engine messages a turn makes, and its tool calls: for the request limits, before
 * anything is built. A user turn of blocks makes one message per tool_result block, plus one for
 * its text blocks if it has any (see userTurn); any other turn makes one.
 */
export function turnCounts(v: unknown): { messages: number; toolCalls: number } {
  const turn = typeof v === "object" && v !== null ? (v as Obj) : undefined;
  const content = turn?.["content"];
  if (!Array.isArray(content)) return { messages: 1, toolCalls: 0 };
  let results = 0;
  let texts = 0;
  let toolCalls = 0;
  for (const b of content) {
    const type = typeof b === "object" && b !== null ? (b as Obj)["type"] : undefined;
    if (type === "tool_result") results++;
    else if (type === "tool_use") toolCalls++;
    else if (type === "text") texts++;
  }
  return { messages: turn?.["role"] === "user" ? results + (texts > 0 ? 1 : 0) : 1, toolCalls };
}
