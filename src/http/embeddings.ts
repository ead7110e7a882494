import type { ServerResponse } from "node:http";
import type { EmbedResponse } from "../../gen/modelstub/v1/episode_pb.js";
import type { Usage } from "../../gen/modelstub/v1/model_pb.js";
import type { Stub } from "../engine/create-stub.js";
import { episodeHeader } from "../shared/header-names.js";
import { Code } from "../shared/status-code.js";
import { refused, type CallTarget } from "./answer-call.js";
import { badRequestError, httpErrorOf, openAiErrorShape } from "./http-error.js";
import type { HttpRequestLog } from "./http-log.js";
import { parseEmbeddingsRequest } from "./parse-embeddings-request.js";
import { sendError, sendJson, setAnswerHeader } from "./send.js";

/** A vector as base64 of its float32 components, little-endian: what OpenAI's SDKs decode. */
function base64Of(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString("base64");
}

/** OpenAI's embeddings answer: `{object: "list", data, model, usage}`, each vector as numbers or base64. */
function embeddingsBody(model: string, response: EmbedResponse, usage: Usage, encoding: "float" | "base64"): object {
  return {
    object: "list",
    data: response.data.map((d, index) => ({ object: "embedding", index, embedding: encoding === "base64" ? base64Of(d.embedding) : d.embedding })),
    model,
    usage: { prompt_tokens: usage.inputTokens, total_tokens: usage.totalTokens },
  };
}

/**
 * `POST /v1/embeddings` (also `/embeddings`, and under OpenRouter's `/api/v1`): one unit vector per
 * input, the script's for its text or derived from it (docs/embeddings.md), in OpenAI's shape. A
 * call in the session's episode like a model call; a body it cannot read is a 400 naming the field.
 */
export async function embeddings(stub: Stub, res: ServerResponse, body: string, target: CallTarget): Promise<Partial<HttpRequestLog>> {
  const parsed = parseEmbeddingsRequest(body);
  if ("error" in parsed) {
    sendError(res, badRequestError(parsed.error, openAiErrorShape));
    return { status: 400, ...refused(Code.INVALID_ARGUMENT, parsed.error.message) };
  }
  const { request, encoding } = parsed.value;
  const result = stub.embed({ session: target.session, request, onStart: (s) => s.episode !== undefined && setAnswerHeader(res, episodeHeader, s.episode) });
  if (result.kind === "status") {
    const answer = httpErrorOf(result.status, openAiErrorShape);
    sendError(res, answer);
    return { status: answer.status, ...refused(result.status.code, result.status.message) };
  }
  sendJson(res, 200, embeddingsBody(request.model, result.response, result.usage, encoding));
  return { status: 200 };
}
