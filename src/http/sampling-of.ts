import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { SamplingParamsSchema, type SamplingParams } from "../../gen/modelstub/v1/model_pb.js";
import { numberAt, optional, uint32At, type Obj } from "./refusal.js";

/** The sampling fields a dialect reads, as init of SamplingParams. */
export type SamplingInit = MessageInitShape<typeof SamplingParamsSchema>;

/**
 * The OpenAI dialects' sampling fields exactly as sent: `temperature`, `top_p` and the first of
 * `maxTokensKeys` the body has (chat completions has two names for it, Responses one), then what
 * `more` adds. Proto3 optional fields stay unset when the client left them out, and no fields at
 * all give no SamplingParams.
 */
export function samplingOf(body: Obj, maxTokensKeys: readonly string[], more?: (init: SamplingInit) => void): SamplingParams | undefined {
  const init: SamplingInit = {};
  const temperature = optional(body, "temperature", numberAt);
  if (temperature !== undefined) init.temperature = temperature;
  const topP = optional(body, "top_p", numberAt);
  if (topP !== undefined) init.topP = topP;
  for (const key of maxTokensKeys) {
    const maxTokens = optional(body, key, uint32At);
    if (maxTokens === undefined) continue;
    init.maxTokens = maxTokens;
    break;
  }
  more?.(init);
  return Object.keys(init).length > 0 ? create(SamplingParamsSchema, init) : undefined;
}
