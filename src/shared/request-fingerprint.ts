import { createHash } from "node:crypto";
import { Role, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";

/**
 * What a recorded entry remembers of the request it answered, readably: the last user text, the
 * tool results since the previous assistant turn (each with the tool it answers), and the names
 * of the tools offered. `modelstub record` and `script from-episode` write it as an entry's
 * `request:`, and a replay compares each request with it (docs/record.md, "Replay checks").
 */
export interface RequestFingerprint {
  lastUser: string;
  toolResults: { tool: string; content: string }[];
  tools: string[];
}

/** The tool a result answers: the name of the call its id points to, else the result's own name. */
function toolOf(messages: GenerateRequest["messages"], at: number): string {
  const m = messages[at]!;
  if (m.toolCallId) {
    for (let i = at - 1; i >= 0; i--) {
      for (const call of messages[i]!.toolCalls) if (call.id === m.toolCallId) return call.name;
    }
  }
  return m.name;
}

/** The readable fingerprint of a request. */
export function fingerprintOf(req: GenerateRequest): RequestFingerprint {
  const messages = req.messages;
  let lastUser = "";
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === Role.USER) lastUser = m.content;
    else if (m.role === Role.ASSISTANT) lastAssistant = i;
  });
  const toolResults: RequestFingerprint["toolResults"] = [];
  for (let i = lastAssistant + 1; i < messages.length; i++) {
    if (messages[i]!.role === Role.TOOL) toolResults.push({ tool: toolOf(messages, i), content: messages[i]!.content });
  }
  return { lastUser, toolResults, tools: req.tools.map((t) => t.name) };
}

const roleNames: Record<number, string> = { [Role.SYSTEM]: "system", [Role.USER]: "user", [Role.ASSISTANT]: "assistant", [Role.TOOL]: "tool" };

/** Sets `key` on `out` when `value` is not proto3's default (an empty text or list, undefined). */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return;
  out[key] = value;
}

/**
 * The canonical request: one JSON text, with no spaces, of the GenerateRequest's meaningful fields
 * in this fixed order, each left out when empty: `model`; `messages`, each `role` (system, user,
 * assistant, tool, or the number), `content`, `tool_calls` (`id`, `name`, `arguments`),
 * `tool_call_id`, `name`; `tools`, each `name`, `description`, `parameters` (the JSON text as sent);
 * `sampling`: `temperature`, `top_p`, `max_tokens`, `stop`, `seed` (as a decimal text). Not the
 * step id (the entry's list is the step's already) nor the session (not part of the request).
 */
export function canonicalRequest(req: GenerateRequest): string {
  const out: Record<string, unknown> = {};
  put(out, "model", req.model);
  put(
    out,
    "messages",
    req.messages.map((m) => {
      const o: Record<string, unknown> = { role: roleNames[m.role] ?? m.role };
      put(o, "content", m.content);
      put(
        o,
        "tool_calls",
        m.toolCalls.map((c) => {
          const t: Record<string, unknown> = {};
          put(t, "id", c.id);
          put(t, "name", c.name);
          put(t, "arguments", c.arguments);
          return t;
        }),
      );
      put(o, "tool_call_id", m.toolCallId);
      put(o, "name", m.name);
      return o;
    }),
  );
  put(
    out,
    "tools",
    req.tools.map((t) => {
      const o: Record<string, unknown> = {};
      put(o, "name", t.name);
      put(o, "description", t.description);
      put(o, "parameters", t.parametersJson);
      return o;
    }),
  );
  const s = req.sampling;
  if (s) {
    const o: Record<string, unknown> = {};
    put(o, "temperature", s.temperature);
    put(o, "top_p", s.topP);
    put(o, "max_tokens", s.maxTokens);
    put(o, "stop", s.stop);
    put(o, "seed", s.seed === undefined ? undefined : String(s.seed));
    if (Object.keys(o).length > 0) out["sampling"] = o;
  }
  return JSON.stringify(out);
}

/** The lowercase hex SHA-256 of a text's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The digest a recorded entry keeps with `--match digest`: sha256 of the canonical request. */
export function requestDigest(req: GenerateRequest): string {
  return `sha256:${sha256Hex(canonicalRequest(req))}`;
}

/** A request's fingerprint and digest, each computed once, when first asked: what a replay check reads. */
export function requestFacts(req: GenerateRequest): { fingerprint(): RequestFingerprint; digest(): string } {
  let fingerprint: RequestFingerprint | undefined;
  let digest: string | undefined;
  return { fingerprint: () => (fingerprint ??= fingerprintOf(req)), digest: () => (digest ??= requestDigest(req)) };
}
