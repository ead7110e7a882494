import { Role, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";

const roleNames: Record<number, string> = { [Role.SYSTEM]: "system", [Role.USER]: "user", [Role.ASSISTANT]: "assistant", [Role.TOOL]: "tool" };

/** The parameters of a tool as JSON, or an open object when the request gave none or not JSON. */
function parametersOf(json: string): unknown {
  if (json === "") return { type: "object", properties: {} };
  try {
    return JSON.parse(json);
  } catch {
    return { type: "object", properties: {} };
  }
}

/**
 * A GenerateRequest as an OpenAI chat-completions body: the inverse of the HTTP front's mapping
 * (docs/http.md), so a request that came in over HTTP goes upstream as it was sent, less what
 * the mapping drops (listed in docs/record.md). `model` fills in a request that names none.
 */
export function chatBodyOf(request: GenerateRequest, stream: boolean, model: string | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model || model || "",
    messages: request.messages.map((m) => {
      const out: Record<string, unknown> = { role: roleNames[m.role] ?? "user", content: m.content };
      if (m.toolCalls.length > 0) {
        out["tool_calls"] = m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
        if (m.content === "") out["content"] = null;
      }
      if (m.toolCallId) out["tool_call_id"] = m.toolCallId;
      if (m.name) out["name"] = m.name;
      return out;
    }),
  };
  if (request.tools.length > 0) {
    body["tools"] = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: parametersOf(t.parametersJson) },
    }));
  }
  const s = request.sampling;
  if (s?.temperature !== undefined) body["temperature"] = s.temperature;
  if (s?.topP !== undefined) body["top_p"] = s.topP;
  // The request does not say whether the client wrote max_completion_tokens (the HTTP front reads
  // either name into this one field), so it goes up under the name most compatible servers read;
  // OpenAI's o-series refuse it (docs/record.md, "What cannot be recorded faithfully").
  if (s?.maxTokens !== undefined) body["max_tokens"] = s.maxTokens;
  if (s && s.stop.length > 0) body["stop"] = s.stop;
  if (s?.seed !== undefined) body["seed"] = Number(s.seed);
  if (stream) {
    body["stream"] = true;
    body["stream_options"] = { include_usage: true };
  }
  return body;
}
