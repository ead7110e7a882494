import { create } from "@bufbuild/protobuf";
import { EmbedRequestSchema, type EmbedRequest } from "../../gen/modelstub/v1/episode_pb.js";
import { defaultEmbedDimensions, embedLimitProblem, embedLimits } from "../shared/embed-limits.js";
import { parseJsonBody } from "./parse-json-body.js";
import { invalid, isObject, kindOf, missing, optional, Refusal, stringAt, wrongType, type BadRequest } from "./refusal.js";
import type { BodyLimits } from "./scan-json-body.js";

/** A POST /v1/embeddings request as read: the engine's EmbedRequest, and how the vectors go on the wire. */
export interface EmbeddingsRequest {
  request: EmbedRequest;
  /** `float` (numbers) or `base64` (float32 little-endian, base64: the OpenAI SDK's default). */
  encoding: "float" | "base64";
}

/** The texts of `input`: one text, or a list of texts. Token arrays (numbers) are refused, naming the field. */
function inputAt(v: unknown): string[] {
  const tokens = "token arrays are not supported: send the texts as strings (docs/embeddings.md)";
  if (typeof v === "string") return [v];
  if (!Array.isArray(v)) wrongType("input", "a text or a list of texts", v);
  return v.map((x, i) => {
    if (typeof x === "string") return x;
    if (typeof x === "number" || Array.isArray(x)) invalid(typeof x === "number" ? "input" : `input[${i}]`, tokens);
    return wrongType(`input[${i}]`, "a text", x);
  });
}

function dimensionsAt(v: unknown, param: string): number {
  if (typeof v !== "number" || !Number.isInteger(v)) wrongType(param, "a whole number", v);
  if (v < 1 || v > embedLimits.dimensions) invalid(param, `expected a whole number from 1 to ${embedLimits.dimensions}, got ${v}`);
  return v;
}

function encodingAt(v: unknown, param: string): "float" | "base64" {
  if (v === "float" || v === "base64") return v;
  if (typeof v !== "string") wrongType(param, `"float" or "base64"`, v);
  return invalid(param, `expected "float" or "base64", got ${JSON.stringify(v)}`);
}

function parseBody(body: unknown): EmbeddingsRequest {
  if (!isObject(body)) {
    throw new Refusal({ message: `the request body must be a JSON object, got ${kindOf(body)}`, param: null, code: "invalid_type" });
  }
  if (body["model"] === undefined || body["model"] === null) missing("model", 'the model to embed with, like "text-embedding-3-small"');
  const model = stringAt(body["model"], "model");
  if (body["input"] === undefined || body["input"] === null) missing("input", 'a text or a list of texts, like ["hello"]');
  const input = inputAt(body["input"]);
  const dimensions = optional(body, "dimensions", dimensionsAt);
  const over = embedLimitProblem(input.length, dimensions ?? defaultEmbedDimensions);
  if (over)
    throw new Refusal({ message: over.message, param: over.param, code: over.param === "input" && input.length > 0 ? "too_many_items" : "invalid_value" });
  const encoding = optional(body, "encoding_format", encodingAt) ?? "float";
  // `user` is read for its type and not kept: it names the caller, not the request.
  optional(body, "user", stringAt);
  return { request: create(EmbedRequestSchema, { model, input, ...(dimensions === undefined ? {} : { dimensions }) }), encoding };
}

/** The list parseBody bounds, checked on the body's text before it is parsed. */
const embeddingsBodyLimits: BodyLimits = [{ path: ["input"], limit: embedLimits.inputs, what: "texts", per: "in a request" }];

/** Reads a POST /v1/embeddings body (OpenAI's shape), or the first problem, naming its field. */
export function parseEmbeddingsRequest(text: string): { value: EmbeddingsRequest } | { error: BadRequest } {
  return parseJsonBody(text, parseBody, embeddingsBodyLimits);
}
