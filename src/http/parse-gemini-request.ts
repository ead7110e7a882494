import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  MessageSchema,
  Role,
  SamplingParamsSchema,
  ToolSchema,
  type GenerateRequest,
  type Tool,
} from "../../gen/modelstub/v1/model_pb.js";
import { requestLimits } from "../engine/request-limits.js";
import { quoteClipped } from "../shared/clip-text.js";
import { contentCounts, contentMessages, systemText } from "./gemini-contents.js";
import { limitTurns } from "./limit-turns.js";
import { parseJsonBody } from "./parse-json-body.js";
import type { BodyLimits } from "./scan-json-body.js";
import {
  invalid,
  isObject,
  kindOf,
  limitCount,
  missing,
  numberAt,
  objectAt,
  optional,
  Refusal,
  seedAt,
  stopSequencesAt,
  stringAt,
  uint32At,
  wrongType,
  type BadRequest,
  type Obj,
} from "./refusal.js";

/** Tool fields of tools that run on Google's side: nothing here runs them. */
const serverTools = [
  "googleSearch",
  "googleSearchRetrieval",
  "codeExecution",
  "urlContext",
  "googleMaps",
  "fileSearch",
  "computerUse",
  "mcpServers",
  "retrieval",
  "enterpriseWebSearch",
];

/** One function declaration as the engine's tool: its schema's JSON text, as a gRPC client and chat completions write the same object. */
function declarationAt(v: unknown, param: string): Tool {
  const d = objectAt(v, param);
  if (d["name"] === undefined || d["name"] === null) missing(`${param}.name`, "the function's name");
  // `parametersJsonSchema` is JSON Schema, `parameters` Gemini's OpenAPI subset; either is the
  // tool's schema to the engine, which reads neither. None is a function without parameters.
  const schema = optional(d, "parametersJsonSchema", objectAt, `${param}.parametersJsonSchema`) ?? optional(d, "parameters", objectAt, `${param}.parameters`);
  return create(ToolSchema, {
    name: stringAt(d["name"], `${param}.name`),
    description: optional(d, "description", stringAt, `${param}.description`) ?? "",
    parametersJson: schema === undefined ? "" : JSON.stringify(schema),
  });
}

/** `tools[]`: every function declaration of every tool, in order; a server tool is refused. */
function toolsOf(list: unknown[]): Tool[] {
  return list.flatMap((v, i) => {
    const t = objectAt(v, `tools[${i}]`);
    for (const k of serverTools) {
      if (t[k] !== undefined && t[k] !== null)
        invalid(`tools[${i}].${k}`, `modelstub offers function declarations only, not ${quoteClipped(k)}: tools that run on Google's side are not simulated`);
    }
    const declarations =
      optional(
        t,
        "functionDeclarations",
        (x, p) => (Array.isArray(x) ? x : wrongType(p, "a list of function declarations", x)),
        `tools[${i}].functionDeclarations`,
      ) ?? [];
    return declarations.map((d, j) => declarationAt(d, `tools[${i}].functionDeclarations[${j}]`));
  });
}

/** `generationConfig`'s sampling fields exactly as sent (none: no sampling); the rest is accepted and ignored. */
function samplingOf(body: Obj) {
  const g = optional(body, "generationConfig", objectAt);
  if (g === undefined) return undefined;
  const at = (k: string) => `generationConfig.${k}`;
  const init: MessageInitShape<typeof SamplingParamsSchema> = {};
  const temperature = optional(g, "temperature", numberAt, at("temperature"));
  if (temperature !== undefined) init.temperature = temperature;
  const topP = optional(g, "topP", numberAt, at("topP"));
  if (topP !== undefined) init.topP = topP;
  const maxTokens = optional(g, "maxOutputTokens", uint32At, at("maxOutputTokens"));
  if (maxTokens !== undefined) init.maxTokens = maxTokens;
  const stop = optional(g, "stopSequences", stopSequencesAt, at("stopSequences"));
  if (stop !== undefined) init.stop = stop;
  const seed = optional(g, "seed", seedAt, at("seed"));
  if (seed !== undefined) init.seed = seed;
  const candidates = optional(g, "candidateCount", uint32At, at("candidateCount"));
  if (candidates !== undefined && candidates !== 1) invalid(at("candidateCount"), `modelstub answers with exactly one candidate, not ${candidates}`);
  return Object.keys(init).length > 0 ? create(SamplingParamsSchema, init) : undefined;
}

/** Gemini's names in a refusal of the turn limits (limit-turns.ts). */
const turnNames = { list: "contents", blocks: "parts", toolCalls: "functionCall parts", results: "functionResponse part", system: "system instruction" };

/** The request limits (engine/request-limits.ts), before anything is built from the lists. */
function checkLimits(list: unknown[], tools: unknown, hasSystem: boolean): void {
  limitTurns(list, contentCounts, turnNames, hasSystem);
  if (Array.isArray(tools)) {
    const declared = tools.reduce((n: number, t) => n + (isObject(t) && Array.isArray(t["functionDeclarations"]) ? t["functionDeclarations"].length : 0), 0);
    limitCount("tools", declared, "function declarations", requestLimits.tools, "in a request");
  }
}

function parseBody(body: unknown, model: string): GenerateRequest {
  if (!isObject(body)) throw new Refusal({ message: `the request body must be a JSON object, got ${kindOf(body)}`, param: null, code: "invalid_type" });
  if (body["contents"] === undefined || body["contents"] === null) missing("contents", 'a list of contents, like [{"role":"user","parts":[{"text":"hi"}]}]');
  const list = body["contents"];
  if (!Array.isArray(list)) wrongType("contents", "a list of contents", list);
  if (list.length === 0) invalid("contents", "expected at least one content");
  const system = optional(body, "systemInstruction", systemText);
  checkLimits(list, body["tools"], system !== undefined);
  // The system prompt is the first message, as chat completions and gRPC clients send it.
  const messages = system === undefined ? [] : [create(MessageSchema, { role: Role.SYSTEM, content: system })];
  list.forEach((c, i) => {
    messages.push(...contentMessages(c, `contents[${i}]`));
  });
  const init: MessageInitShape<typeof GenerateRequestSchema> = { model, messages };
  const tools = optional(body, "tools", (x, p) => (Array.isArray(x) ? toolsOf(x) : wrongType(p, "a list of tools", x)));
  if (tools !== undefined && tools.length > 0) init.tools = tools;
  const sampling = samplingOf(body);
  if (sampling) init.sampling = sampling;
  return create(GenerateRequestSchema, init);
}

/**
 * The lists checkLimits bounds, checked on the body's text before it is parsed: every content
 * makes at least one engine message.
 */
export const geminiBodyLimits: BodyLimits = [
  { path: ["contents"], limit: requestLimits.messages, what: "contents", per: "in a request" },
  // Each tool holds a list of declarations: their total waits for the parsed body (checkLimits), within the bound on its values.
  { path: ["tools"], limit: requestLimits.tools, what: "tools", per: "in a request" },
  { path: ["generationConfig", "stopSequences"], limit: requestLimits.stopSequences, what: "stop sequences", per: "in a request" },
];

/**
 * Reads a Gemini generateContent body into the GenerateRequest that chat completions and a gRPC
 * client build for the same conversation: `systemInstruction` first, each functionResponse part
 * a Role.TOOL message before its content's text, functionCall args written as JSON, only the
 * sampling fields sent. `model` is the path's: Gemini's body has none.
 */
export function parseGeminiRequest(text: string, model: string): { value: GenerateRequest } | { error: BadRequest } {
  return parseJsonBody(text, (body) => parseBody(body, model), geminiBodyLimits);
}
