import type { Dialect } from "./dialect.js";
import { geminiErrorOf, geminiErrorShape } from "./gemini-error.js";
import { GeminiStreamWriter, geminiEvent, generateContentBody } from "./gemini-wire.js";
import type { HttpDialect } from "./http-dialect.js";
import { parseGeminiRequest } from "./parse-gemini-request.js";

// route.ts shapes the front's own errors under /v1beta with it.
export { geminiErrorShape } from "./gemini-error.js";

/**
 * Where Gemini's API serves its models, by API version: `<base>/<id>:<method>`. @google/genai
 * 3.x defaults to v1 (`/v1/models/...`), older SDKs and Google's docs use v1beta.
 */
const geminiBases = ["/v1beta/models", "/v1/models"];

/**
 * The Gemini model list a GET of `path` asks for, as its base (`/v1beta/models` or `/v1/models`),
 * or undefined. `/v1/models` is also OpenAI's model list: it is Gemini's when the request comes
 * from Google's SDKs, which name themselves in `x-goog-api-client` and send their key as
 * `x-goog-api-key` (`fromGoogle`, either header sent).
 */
export function geminiModelsBase(path: string, fromGoogle: boolean): string | undefined {
  const base = geminiBases.find((b) => path === b || path.startsWith(`${b}/`));
  return base === "/v1beta/models" || (base !== undefined && fromGoogle) ? base : undefined;
}

/** Gemini generateContent on the wire. */
const geminiWire: Dialect = {
  errorOf: (status) => geminiErrorOf(status),
  // Gemini's response has no creation time on the Developer API.
  unaryBody: (response) => generateContentBody(response),
  stream() {
    const writer = new GeminiStreamWriter();
    return {
      frame: (f) => writer.frame(f),
      // Gemini's stream has no closing event: the body just ends.
      end: () => "",
      // Google's error body as one more event: the SDK throws it as an ApiError.
      error: (e) => geminiEvent(e.body),
    };
  },
};

/** A model call's path: the model id (the path's segment, percent-decoded) and whether it streams. */
export interface GeminiCall {
  model: string;
  stream: boolean;
}

/**
 * The model call a path asks for, `/v1beta/models/<model>:generateContent` or
 * `:streamGenerateContent` (or the same under `/v1/models`, where no other dialect has a colon
 * method), or undefined. The method follows the last colon, so a model id may
 * hold colons and slashes (`models/openai/gpt-4o` is the SDK's path for model `openai/gpt-4o`).
 */
export function geminiCallOf(path: string): GeminiCall | undefined {
  const base = geminiBases.find((b) => path.startsWith(`${b}/`));
  if (base === undefined) return undefined;
  const rest = path.slice(base.length + 1);
  const colon = rest.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const method = rest.slice(colon + 1);
  if (method !== "generateContent" && method !== "streamGenerateContent") return undefined;
  // The whole path was decoded once already (targetOf), so this cannot throw.
  return { model: decodeURIComponent(rest.slice(0, colon)), stream: method === "streamGenerateContent" };
}

/**
 * `POST /v1beta/models/<model>:generateContent` and `:streamGenerateContent?alt=sse` (and under
 * `/v1/models`): one model
 * call on the stub for the path's model, answered as Gemini's API does, and recorded in the same
 * episode as the same call over any other front. `sse` is whether the query asks for `alt=sse`:
 * without it Gemini streams one JSON list, which modelstub does not write.
 */
export function geminiDialect({ model, stream }: GeminiCall, sse: boolean): HttpDialect {
  return {
    shape: geminiErrorShape,
    read(body) {
      if (stream && !sse) {
        return {
          error: {
            message: "alt: modelstub streams generateContent as server-sent events only: add ?alt=sse to the URL (the SDKs do)",
            param: "alt",
            code: "invalid_value",
          },
        };
      }
      const parsed = parseGeminiRequest(body, model);
      if ("error" in parsed) return parsed;
      return { value: { request: parsed.value, stream, wire: geminiWire } };
    },
  };
}
