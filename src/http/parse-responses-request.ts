import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { quoteClipped } from "../shared/clip-text.js";
import { GenerateRequestSchema, MessageSchema, Role, ToolSchema, type GenerateRequest, type Message, type Tool } from "../../gen/modelstub/v1/model_pb.js";
import { requestLimits } from "../engine/request-limits.js";
import { parseJsonBody } from "./parse-json-body.js";
import { samplingOf } from "./sampling-of.js";
import type { BodyLimits } from "./scan-json-body.js";
import { inputMessages, type ItemLookup } from "./parse-responses-input.js";
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
  stringAt,
  uint32At,
  wrongType,
  type BadRequest,
  type Obj,
} from "./refusal.js";

/**
 * What a response object repeats of its request (the SDK's `Response` type requires most of
 * these): what the client sent, or the API's default when it sent nothing. Never read by the
 * engine; only echoed, so the same request always gets the same bytes.
 */
export interface ResponseEcho {
  instructions: string | null;
  /** The function tools as sent: {type, name, description, parameters, strict}. */
  tools: object[];
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  parallel_tool_calls: boolean;
  tool_choice: unknown;
  text: unknown;
  metadata: unknown;
  reasoning: unknown;
  truncation: unknown;
}

/** A Responses request: the engine's GenerateRequest, whether to stream, and what the answer echoes. */
export interface ResponsesRequest {
  request: GenerateRequest;
  stream: boolean;
  echo: ResponseEcho;
}

/** Refuses a parameter modelstub cannot honour, saying what to do instead. */
function unsupported(param: string, message: string): never {
  throw new Refusal({ message: `${param}: ${message}`, param, code: "unsupported_parameter" });
}

/** Parameters that need state or services modelstub does not have: refused, not silently dropped. */
function refuseStateful(body: Obj): void {
  const whole = "send the whole conversation in `input` (earlier output items and function_call_output items included), with store: false";
  if (body["previous_response_id"] != null) unsupported("previous_response_id", `modelstub keeps no responses; ${whole}`);
  if (body["conversation"] != null) unsupported("conversation", `modelstub keeps no conversations; ${whole}`);
  if (body["prompt"] != null) unsupported("prompt", "modelstub has no stored prompt templates; send instructions and input instead");
  if (optional(body, "background", booleanAt) === true)
    unsupported("background", "modelstub answers in the request itself (unary or streamed), never in the background");
}

function toolAt(v: unknown, param: string): { tool: Tool; echo: object } {
  const t = objectAt(v, param);
  // null means "not sent", as for every other field.
  if (t["type"] !== undefined && t["type"] !== null && t["type"] !== "function") {
    invalid(`${param}.type`, `modelstub offers function tools only ({"type":"function","name":...}), not the built-in tool ${quoteClipped(t["type"])}`);
  }
  if (t["name"] === undefined || t["name"] === null) missing(`${param}.name`, "the tool's name");
  const name = stringAt(t["name"], `${param}.name`);
  const description = optional(t, "description", stringAt, `${param}.description`);
  const parameters = optional(t, "parameters", objectAt, `${param}.parameters`);
  const strict = optional(t, "strict", booleanAt, `${param}.strict`);
  return {
    // The same Tool a gRPC client and chat completions write for the same schema object.
    tool: create(ToolSchema, { name, description: description ?? "", parametersJson: parameters === undefined ? "" : JSON.stringify(parameters) }),
    echo: { type: "function", name, description: description ?? null, parameters: parameters ?? null, strict: strict ?? null },
  };
}

function messagesOf(body: Obj, instructions: string | undefined, items: ItemLookup): Message[] {
  const input = body["input"];
  if (input === undefined || input === null) missing("input", 'a string, or a list of items like [{"role":"user","content":"hi"}]');
  let messages: Message[];
  if (typeof input === "string") messages = [create(MessageSchema, { role: Role.USER, content: input })];
  else if (Array.isArray(input)) {
    if (input.length === 0) invalid("input", "expected at least one item");
    messages = inputMessages(input, items);
  } else wrongType("input", "a string or a list of items", input);
  // The system prompt is the first message, as chat completions and gRPC clients send it.
  if (instructions !== undefined) messages.unshift(create(MessageSchema, { role: Role.SYSTEM, content: instructions }));
  limitCount("input", messages.length, "messages (instructions included)", requestLimits.messages, "in a request");
  return messages;
}

/** Echoed as sent when of the type the API takes; the API's default when not sent. */
function echoOf(body: Obj, instructions: string | undefined, tools: object[]): ResponseEcho {
  const toolChoice = optional(body, "tool_choice", (v, p) => (typeof v === "string" || isObject(v) ? v : wrongType(p, "a string or an object", v)));
  return {
    instructions: instructions ?? null,
    tools,
    temperature: optional(body, "temperature", numberAt) ?? null,
    top_p: optional(body, "top_p", numberAt) ?? null,
    max_output_tokens: optional(body, "max_output_tokens", uint32At) ?? null,
    parallel_tool_calls: optional(body, "parallel_tool_calls", booleanAt) ?? true,
    tool_choice: toolChoice ?? "auto",
    text: optional(body, "text", objectAt) ?? { format: { type: "text" } },
    metadata: optional(body, "metadata", objectAt) ?? {},
    reasoning: optional(body, "reasoning", objectAt) ?? null,
    truncation: optional(body, "truncation", stringAt) ?? "disabled",
  };
}

function parseBody(body: unknown, items: ItemLookup): ResponsesRequest {
  if (!isObject(body)) {
    throw new Refusal({ message: `the request body must be a JSON object, got ${kindOf(body)}`, param: null, code: "invalid_type" });
  }
  refuseStateful(body);
  const list = optional(body, "tools", (x, p) => (Array.isArray(x) ? x : wrongType(p, "a list of tools", x)));
  if (list) limitCount("tools", list.length, "tools", requestLimits.tools, "in a request");
  const instructions = optional(body, "instructions", stringAt);
  const stream = optional(body, "stream", booleanAt) ?? false;
  const init: MessageInitShape<typeof GenerateRequestSchema> = {
    model: optional(body, "model", stringAt) ?? "",
    messages: messagesOf(body, instructions, items),
  };
  const tools = (list ?? []).map((t, i) => toolAt(t, `tools[${i}]`));
  if (tools.length > 0) init.tools = tools.map((t) => t.tool);
  const sampling = samplingOf(body, ["max_output_tokens"]);
  if (sampling) init.sampling = sampling;
  return {
    request: create(GenerateRequestSchema, init),
    stream,
    echo: echoOf(
      body,
      instructions,
      tools.map((t) => t.echo),
    ),
  };
}

/**
 * The lists parseBody bounds, checked on the body's text before it is parsed: `input` holds at
 * most as many items as a request has messages (so its function_call items are bounded too).
 */
export const responsesBodyLimits: BodyLimits = [
  { path: ["input"], limit: requestLimits.messages, what: "items", per: "in a request" },
  { path: ["tools"], limit: requestLimits.tools, what: "tools", per: "in a request" },
];

/**
 * Reads an OpenAI Responses body into the GenerateRequest a gRPC client (or a chat completions
 * client, parseChatRequest) sends for the same conversation: `instructions` is the first system
 * message, `input` items become messages, function tools become tools, and sampling has only
 * the fields sent. Parameters modelstub need not honour to answer (store, include, tool_choice,
 * text, reasoning, ...) are accepted and ignored; ones it cannot honour (previous_response_id,
 * built-in tools, images, files) are refused naming the field. Returns the first problem as data.
 * `items` resolves an `item_reference` (none resolve without it).
 */
export function parseResponsesRequest(text: string, items: ItemLookup = () => undefined): { value: ResponsesRequest } | { error: BadRequest } {
  return parseJsonBody(text, (body) => parseBody(body, items), responsesBodyLimits);
}
