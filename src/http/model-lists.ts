import type { CompiledScript, DeclaredModel } from "../script/compiled-script.js";
import { createdEpoch } from "./openai-wire.js";

/** The models a script declares; a script that declares none lists its default model, as ListModels does. */
export function declaredModels(script: CompiledScript): DeclaredModel[] {
  if (script.models.length > 0) return script.models;
  const id = script.defaultModel;
  return [
    { id, name: id, ownedBy: "modelstub", contextLength: 0, inputModalities: ["text"], outputModalities: ["text"], promptPrice: "0", completionPrice: "0" },
  ];
}

/** One model in OpenAI's shape; `created` is the fixed epoch, never the wall clock. */
export function openAiModel(m: DeclaredModel): object {
  return { id: m.id, object: "model", created: createdEpoch, owned_by: m.ownedBy };
}

/** `GET /v1/models`: OpenAI's list shape. */
export function openAiModelList(script: CompiledScript): object {
  return { object: "list", data: declaredModels(script).map(openAiModel) };
}

/** The request parameters the HTTP front reads (the rest are accepted and ignored). */
const supportedParameters = ["max_tokens", "seed", "stop", "temperature", "tool_choice", "tools", "top_p"];

/**
 * `GET /models`: OpenRouter's catalog shape. `output_modalities` filters as OpenRouter does: a
 * comma-separated list of modalities, or `all` (also the default here) for every model.
 */
export function catalogModelList(script: CompiledScript, outputModalities: string | null): object {
  const wanted =
    outputModalities === null || outputModalities === "" || outputModalities === "all" ? undefined : outputModalities.split(",").map((s) => s.trim());
  const models = declaredModels(script).filter((m) => !wanted || m.outputModalities.some((o) => wanted.includes(o)));
  return {
    data: models.map((m) => ({
      id: m.id,
      // OpenRouter's permanent slug; a script's model id is already that.
      canonical_slug: m.id,
      hugging_face_id: "",
      name: m.name,
      created: createdEpoch,
      description: "",
      context_length: m.contextLength,
      architecture: {
        modality: `${m.inputModalities.join("+")}->${m.outputModalities.join("+")}`,
        input_modalities: m.inputModalities,
        output_modalities: m.outputModalities,
        tokenizer: "Other",
        instruct_type: null,
      },
      pricing: { prompt: m.promptPrice, completion: m.completionPrice },
      top_provider: { context_length: m.contextLength, max_completion_tokens: null, is_moderated: false },
      per_request_limits: null,
      supported_parameters: supportedParameters,
      // modelstub applies no defaults of its own: every parameter is as the request sends it.
      default_parameters: { temperature: null, top_p: null, frequency_penalty: null },
    })),
  };
}

/** The generation methods a Gemini model lists: the two modelstub serves. */
const geminiMethods = ["generateContent", "streamGenerateContent"];

/** One model in Gemini's shape, named `models/<id>` as Gemini names its models. */
export function geminiModel(m: DeclaredModel): object {
  return {
    name: `models/${m.id}`,
    version: "",
    displayName: m.name,
    description: "",
    inputTokenLimit: m.contextLength,
    outputTokenLimit: m.contextLength,
    supportedGenerationMethods: geminiMethods,
  };
}

/** `GET /v1beta/models`: Gemini's list shape, every model on one page (no nextPageToken). */
export function geminiModelList(script: CompiledScript): object {
  return { models: declaredModels(script).map(geminiModel) };
}
