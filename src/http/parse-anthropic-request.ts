import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { quoteClipped } from "../shared/clip-text.js";
import { GenerateRequestSchema, MessageSchema, Role, SamplingParamsSchema, ToolSchema, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { requestLimits } from "../engine/request-limits.js";
import { textContentAt, turnCounts, turnMessages } from "./anthropic-turns.js";
import { limitTurns } from "./limit-turns.js";
import { parseJsonBody } from "./parse-json-body.js";
import type { BodyLimits } from "./scan-json-body.js";
import {
  booleanAt,
  invalid,
  isObject,
  kindOf,
  limitCount,
  missing,
  numberAt,
  objectAt,
  optional,
  Refusal,
  stopSequencesAt,
  stringAt,
  uint32At,
  wrongType,
  type BadRequest,
  type Obj,
} from "./refusal.js";

/** An Anthropic Messages request, as the engine's GenerateRequest plus whether to stream. */
export interface AnthropicRequest {
  request: GenerateRequest;
  stream: boolean;
}

function toolAt(v: unknown, param: string) {
  const t = objectAt(v, param);
  // Server tools (web_search_20250305, bash_20250124, ...) run on Anthropic's side: nothing here runs them.
  const type = optional(t, "type", stringAt, `${param}.type`);
  if (type !== undefined && type !== "custom")
    invalid(
      `${param}.type`,
      `modelstub offers custom tools only ({name, description, input_schema}), not ${quoteClipped(type)}: server tools are not simulated`,
    );
  if (t["name"] === undefined) missing(`${param}.name`, "the tool's name");
  if (t["input_schema"] === undefined) missing(`${param}.input_schema`, "the JSON Schema of the tool's input, an object");
  return create(ToolSchema, {
    name: stringAt(t["name"], `${param}.name`),
    description: optional(t, "description", stringAt, `${param}.description`) ?? "",
    // The same text a gRPC client and chat completions write for the same schema object.
    parametersJson: JSON.stringify(objectAt(t["input_schema"], `${param}.input_schema`)),
  });
}

/** Sampling fields exactly as sent: proto3 optional fields stay unset when the client left them out. */
function samplingOf(body: Obj, countOnly: boolean) {
  // Required by Anthropic for a model call, which it refuses without it; modelstub does the same,
  // so a client that would fail against Anthropic fails here first. count_tokens takes none.
  const init: MessageInitShape<typeof SamplingParamsSchema> = {};
  if (!countOnly || (body["max_tokens"] !== undefined && body["max_tokens"] !== null)) {
    if (body["max_tokens"] === undefined || body["max_tokens"] === null) missing("max_tokens", "the most tokens the reply may have, like 1024");
    init.maxTokens = uint32At(body["max_tokens"], "max_tokens");
    if (init.maxTokens < 1) invalid("max_tokens", "expected at least 1, got 0");
  }
  const temperature = optional(body, "temperature", numberAt);
  if (temperature !== undefined) init.temperature = temperature;
  const topP = optional(body, "top_p", numberAt);
  if (topP !== undefined) init.topP = topP;
  const stop = optional(body, "stop_sequences", stopSequencesAt);
  if (stop !== undefined) init.stop = stop;
  return create(SamplingParamsSchema, init);
}

/** Anthropic's names in a refusal of the turn limits (limit-turns.ts). */
const turnNames = { list: "messages", blocks: "content", toolCalls: "tool_use blocks", results: "tool_result block", system: "system prompt" };

/** The request limits (engine/request-limits.ts), before anything is built from the lists. */
function checkLimits(list: unknown[], tools: unknown, hasSystem: boolean): void {
  limitTurns(list, turnCounts, turnNames, hasSystem);
  if (Array.isArray(tools)) limitCount("tools", tools.length, "tools", requestLimits.tools, "in a request");
}

function parseBody(body: unknown, countOnly: boolean): AnthropicRequest {
  if (!isObject(body)) throw new Refusal({ message: `the request body must be a JSON object, got ${kindOf(body)}`, param: null, code: "invalid_type" });
  if (body["model"] === undefined || body["model"] === null)
    missing("model", 'the model to answer as, like "claude-sonnet-4-5" (any id: the script decides what it means)');
  const model = stringAt(body["model"], "model");
  if (body["messages"] === undefined || body["messages"] === null) missing("messages", 'a list of turns, like [{"role":"user","content":"hi"}]');
  const list = body["messages"];
  if (!Array.isArray(list)) wrongType("messages", "a list of turns", list);
  if (list.length === 0) invalid("messages", "expected at least one turn");
  checkLimits(list, body["tools"], body["system"] !== undefined && body["system"] !== null);
  const stream = optional(body, "stream", booleanAt) ?? false;
  const sampling = samplingOf(body, countOnly);
  const system = optional(body, "system", (v, p) => textContentAt(v, p, "system"));
  // The system prompt is the first message, as chat completions and gRPC clients send it.
  const messages = system === undefined ? [] : [create(MessageSchema, { role: Role.SYSTEM, content: system })];
  list.forEach((m, i) => {
    messages.push(...turnMessages(m, `messages[${i}]`));
  });
  const init: MessageInitShape<typeof GenerateRequestSchema> = { model, messages, sampling };
  const tools = optional(body, "tools", (x, p) => (Array.isArray(x) ? x : wrongType(p, "a list of tools", x)));
  if (tools !== undefined && tools.length > 0) init.tools = tools.map((t, i) => toolAt(t, `tools[${i}]`));
  return { request: create(GenerateRequestSchema, init), stream };
}

/**
 * The lists checkLimits bounds, checked on the body's text before it is parsed. Every turn makes
 * at least one engine message, so more turns than the message limit are refused here (as
 * "messages", Anthropic's word for its turns); the finer counts (tool_result blocks, tool_use
 * blocks by type) wait for the parsed body, within the bound on its values.
 */
export const anthropicBodyLimits: BodyLimits = [
  { path: ["messages"], limit: requestLimits.messages, what: "messages", per: "in a request" },
  { path: ["tools"], limit: requestLimits.tools, what: "tools", per: "in a request" },
  { path: ["stop_sequences"], limit: requestLimits.stopSequences, what: "stop sequences", per: "in a request" },
];

/**
 * Reads an Anthropic Messages body into the GenerateRequest that chat completions and a gRPC
 * client build for the same conversation: the system prompt first, each tool_result block a
 * Role.TOOL message before its turn's text, tool_use inputs written as JSON, only the sampling
 * fields sent (max_tokens always is). Fields the engine has no use for (top_k, metadata,
 * tool_choice, thinking, cache_control, ...) are accepted and ignored; content it cannot honour
 * (images, documents, server tools) is refused naming the field. Returns the first problem as data.
 */
export function parseAnthropicRequest(text: string): { value: AnthropicRequest } | { error: BadRequest } {
  return parseJsonBody(text, (body) => parseBody(body, false), anthropicBodyLimits);
}

/** The same for `/v1/messages/count_tokens`, whose body is a model call's without `max_tokens`. */
export function parseCountTokensRequest(text: string): { value: AnthropicRequest } | { error: BadRequest } {
  return parseJsonBody(text, (body) => parseBody(body, true), anthropicBodyLimits);
}
