import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { quoteClipped } from "../shared/clip-text.js";
import { GenerateRequestSchema, MessageSchema, Role, ToolCallSchema, ToolSchema, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { requestLimits } from "../engine/request-limits.js";
import { parseJsonBody } from "./parse-json-body.js";
import { samplingOf } from "./sampling-of.js";
import type { BodyLimits } from "./scan-json-body.js";
import {
  booleanAt,
  invalid,
  isObject,
  kindOf,
  limitCount,
  missing,
  objectAt,
  optional,
  Refusal,
  seedAt,
  stringAt,
  uint32At,
  wrongType,
  type BadRequest,
  type Obj,
} from "./refusal.js";

export type { BadRequest } from "./refusal.js";

/** A chat-completions request, as the engine's GenerateRequest plus the HTTP-only options. */
export interface ChatRequest {
  request: GenerateRequest;
  stream: boolean;
  /** `stream_options.include_usage`: a final usage chunk with empty choices. */
  includeUsage: boolean;
}

const roles: Record<string, Role> = {
  system: Role.SYSTEM,
  developer: Role.SYSTEM,
  user: Role.USER,
  assistant: Role.ASSISTANT,
  tool: Role.TOOL,
};

/** Message content: a string, or a list of `{type: "text", text}` parts joined with nothing between. */
function contentAt(v: unknown, param: string): string {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) wrongType(param, "a string or a list of text parts", v);
  return v
    .map((part, i) => {
      const p = objectAt(part, `${param}[${i}]`);
      if (p["type"] !== "text") {
        invalid(`${param}[${i}].type`, `modelstub reads text parts only ({"type":"text","text":"..."}), not ${quoteClipped(p["type"] ?? null)}`);
      }
      return stringAt(p["text"], `${param}[${i}].text`);
    })
    .join("");
}

function toolCallAt(v: unknown, param: string) {
  const c = objectAt(v, param);
  if (c["type"] !== undefined && c["type"] !== "function") invalid(`${param}.type`, `expected "function", got ${quoteClipped(c["type"])}`);
  const fn = c["function"] === undefined ? missing(`${param}.function`, "an object with name and arguments") : objectAt(c["function"], `${param}.function`);
  return create(ToolCallSchema, {
    id: c["id"] === undefined ? missing(`${param}.id`, "the id of the tool call") : stringAt(c["id"], `${param}.id`),
    name: fn["name"] === undefined ? missing(`${param}.function.name`, "the tool's name") : stringAt(fn["name"], `${param}.function.name`),
    arguments:
      fn["arguments"] === undefined
        ? missing(`${param}.function.arguments`, "the arguments as a JSON text")
        : stringAt(fn["arguments"], `${param}.function.arguments`),
  });
}

function messageAt(v: unknown, param: string) {
  const m = objectAt(v, param);
  if (m["role"] === undefined) missing(`${param}.role`, "one of system, developer, user, assistant, tool");
  const roleText = stringAt(m["role"], `${param}.role`);
  const role = roles[roleText];
  if (role === undefined) invalid(`${param}.role`, `expected one of system, developer, user, assistant, tool, got ${quoteClipped(roleText)}`);
  const toolCalls = optional(m, "tool_calls", (x, p) => (Array.isArray(x) ? x : wrongType(p, "a list", x)), `${param}.tool_calls`) ?? [];
  if (toolCalls.length > 0 && role !== Role.ASSISTANT) invalid(`${param}.tool_calls`, "only assistant messages carry tool calls");
  const content = optional(m, "content", contentAt, `${param}.content`);
  // An assistant turn that only calls tools has no content; every other turn says something.
  if (content === undefined && role !== Role.ASSISTANT) missing(`${param}.content`, `a ${roleText} message needs content`);
  const init: MessageInitShape<typeof MessageSchema> = { role, content: content ?? "" };
  if (toolCalls.length > 0) init.toolCalls = toolCalls.map((c, i) => toolCallAt(c, `${param}.tool_calls[${i}]`));
  if (role === Role.TOOL) {
    init.toolCallId =
      m["tool_call_id"] === undefined
        ? missing(`${param}.tool_call_id`, "the id of the tool call this result answers")
        : stringAt(m["tool_call_id"], `${param}.tool_call_id`);
  }
  const name = optional(m, "name", stringAt, `${param}.name`);
  if (name !== undefined) init.name = name;
  return create(MessageSchema, init);
}

function toolAt(v: unknown, param: string) {
  const t = objectAt(v, param);
  if (t["type"] !== undefined && t["type"] !== "function") invalid(`${param}.type`, `modelstub offers function tools only, not ${quoteClipped(t["type"])}`);
  if (t["function"] === undefined) missing(`${param}.function`, "an object with name, description and parameters");
  const fn = objectAt(t["function"], `${param}.function`);
  if (fn["name"] === undefined) missing(`${param}.function.name`, "the tool's name");
  const parameters = optional(fn, "parameters", objectAt, `${param}.function.parameters`);
  return create(ToolSchema, {
    name: stringAt(fn["name"], `${param}.function.name`),
    description: optional(fn, "description", stringAt, `${param}.function.description`) ?? "",
    // The same text a gRPC client writes for the same schema object.
    parametersJson: parameters === undefined ? "" : JSON.stringify(parameters),
  });
}

function stopAt(v: unknown, param: string): string[] {
  if (typeof v === "string") return [v];
  if (!Array.isArray(v)) wrongType(param, "a string or a list of strings", v);
  limitCount(param, v.length, "stop sequences", requestLimits.stopSequences, "in a request");
  return v.map((s, i) => stringAt(s, `${param}[${i}]`));
}

/** Sampling fields exactly as sent (sampling-of.ts), with chat completions' `stop` and `seed`. */
function chatSamplingOf(body: Obj) {
  return samplingOf(body, ["max_completion_tokens", "max_tokens"], (init) => {
    const stop = optional(body, "stop", stopAt);
    if (stop !== undefined) init.stop = stop;
    const seed = optional(body, "seed", seedAt);
    if (seed !== undefined) init.seed = seed;
  });
}

function parseBody(body: unknown): ChatRequest {
  if (!isObject(body)) {
    throw new Refusal({ message: `the request body must be a JSON object, got ${kindOf(body)}`, param: null, code: "invalid_type" });
  }
  if (body["messages"] === undefined || body["messages"] === null) missing("messages", 'a list of messages, like [{"role":"user","content":"hi"}]');
  const list = body["messages"];
  if (!Array.isArray(list)) wrongType("messages", "a list of messages", list);
  if (list.length === 0) invalid("messages", "expected at least one message");
  // The request limits, before anything is built from the lists.
  limitCount("messages", list.length, "messages", requestLimits.messages, "in a request");
  let calls = 0;
  list.forEach((m, i) => {
    const n = isObject(m) && Array.isArray(m["tool_calls"]) ? m["tool_calls"].length : 0;
    limitCount(`messages[${i}].tool_calls`, n, "tool calls", requestLimits.toolCallsPerMessage, "in a message");
    calls += n;
  });
  limitCount("the request", calls, "tool calls in all its messages", requestLimits.toolCalls, "in a request", "messages");
  if (Array.isArray(body["tools"])) limitCount("tools", body["tools"].length, "tools", requestLimits.tools, "in a request");
  const n = optional(body, "n", uint32At);
  if (n !== undefined && n !== 1) invalid("n", `modelstub answers with exactly one choice, not ${n}`);
  const stream = optional(body, "stream", booleanAt) ?? false;
  const options = optional(body, "stream_options", objectAt);
  const includeUsage = (options && optional(options, "include_usage", booleanAt, "stream_options.include_usage")) ?? false;
  const init: MessageInitShape<typeof GenerateRequestSchema> = {
    model: optional(body, "model", stringAt) ?? "",
    messages: list.map((m, i) => messageAt(m, `messages[${i}]`)),
  };
  const tools = optional(body, "tools", (x, p) => (Array.isArray(x) ? x : wrongType(p, "a list of tools", x)));
  if (tools !== undefined && tools.length > 0) init.tools = tools.map((t, i) => toolAt(t, `tools[${i}]`));
  const sampling = chatSamplingOf(body);
  if (sampling) init.sampling = sampling;
  return { request: create(GenerateRequestSchema, init), stream, includeUsage };
}

/**
 * The lists parseBody bounds, checked on the body's text before it is parsed, with the messages
 * parseBody would give (it checks them again on the parsed body).
 */
export const chatBodyLimits: BodyLimits = [
  { path: ["messages"], limit: requestLimits.messages, what: "messages", per: "in a request" },
  {
    path: ["messages", "*", "tool_calls"],
    limit: requestLimits.toolCallsPerMessage,
    what: "tool calls",
    per: "in a message",
    total: { limit: requestLimits.toolCalls, field: "the request", what: "tool calls in all its messages", param: "messages" },
  },
  { path: ["tools"], limit: requestLimits.tools, what: "tools", per: "in a request" },
  { path: ["stop"], limit: requestLimits.stopSequences, what: "stop sequences", per: "in a request" },
];

export function parseChatRequest(text: string): { value: ChatRequest } | { error: BadRequest } {
  return parseJsonBody(text, parseBody, chatBodyLimits);
}
