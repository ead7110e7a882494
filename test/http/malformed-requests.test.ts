import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

const user = { role: "user", content: "hi" };

/** [what is wrong, body, the param named, a phrase of the message, the code]. */
const corpus: [string, string | object, string | null, string, string][] = [
  ["malformed JSON", '{"messages": [', null, "not valid JSON", "invalid_json"],
  ["an empty body", "", null, "not valid JSON", "invalid_json"],
  ["a list for a body", "[]", null, "must be a JSON object", "invalid_type"],
  ["no messages", { model: "m" }, "messages", "messages is required", "missing_required_parameter"],
  ["messages as a string", { messages: "hi" }, "messages", "messages: expected a list", "invalid_type"],
  ["no message at all", { messages: [] }, "messages", "at least one message", "invalid_value"],
  ["a message that is a string", { messages: ["hi"] }, "messages[0]", "messages[0]: expected an object", "invalid_type"],
  ["a message without a role", { messages: [{ content: "hi" }] }, "messages[0].role", "messages[0].role is required", "missing_required_parameter"],
  ["an unknown role", { messages: [user, { role: "robot", content: "x" }] }, "messages[1].role", 'got "robot"', "invalid_value"],
  ["a user message without content", { messages: [{ role: "user" }] }, "messages[0].content", "needs content", "missing_required_parameter"],
  ["content as a number", { messages: [{ role: "user", content: 42 }] }, "messages[0].content", "a string or a list of text parts", "invalid_type"],
  [
    "an image part",
    { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] },
    "messages[0].content[0].type",
    "text parts only",
    "invalid_value",
  ],
  [
    "a text part without text",
    { messages: [{ role: "user", content: [{ type: "text" }] }] },
    "messages[0].content[0].text",
    "expected a string",
    "invalid_type",
  ],
  [
    "a tool result without tool_call_id",
    { messages: [user, { role: "tool", content: "out" }] },
    "messages[1].tool_call_id",
    "tool_call_id is required",
    "missing_required_parameter",
  ],
  [
    "tool call arguments as an object",
    { messages: [user, { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "bash", arguments: { a: 1 } } }] }] },
    "messages[1].tool_calls[0].function.arguments",
    "expected a string",
    "invalid_type",
  ],
  [
    "tool calls on a user message",
    { messages: [{ role: "user", content: "x", tool_calls: [{ id: "c", function: { name: "b", arguments: "{}" } }] }] },
    "messages[0].tool_calls",
    "only assistant messages",
    "invalid_value",
  ],
  [
    "a tool without a function",
    { messages: [user], tools: [{ type: "function" }] },
    "tools[0].function",
    "tools[0].function is required",
    "missing_required_parameter",
  ],
  [
    "tool parameters as a string",
    { messages: [user], tools: [{ type: "function", function: { name: "t", parameters: "{}" } }] },
    "tools[0].function.parameters",
    "expected an object",
    "invalid_type",
  ],
  ["model as a number", { model: 4, messages: [user] }, "model", "model: expected a string", "invalid_type"],
  ["temperature as a string", { messages: [user], temperature: "hot" }, "temperature", "expected a number", "invalid_type"],
  ["max_tokens negative", { messages: [user], max_tokens: -1 }, "max_tokens", "from 0 to 4294967295", "invalid_value"],
  ["max_tokens fractional", { messages: [user], max_tokens: 1.5 }, "max_tokens", "expected a whole number", "invalid_type"],
  ["stop as a number", { messages: [user], stop: 3 }, "stop", "a string or a list of strings", "invalid_type"],
  ["a stop list with a number", { messages: [user], stop: ["a", 3] }, "stop[1]", "expected a string", "invalid_type"],
  ["seed as a string", { messages: [user], seed: "7" }, "seed", "expected a whole number", "invalid_type"],
  ["stream as a string", { messages: [user], stream: "yes" }, "stream", "expected true or false", "invalid_type"],
  [
    "include_usage as a string",
    { messages: [user], stream: true, stream_options: { include_usage: "y" } },
    "stream_options.include_usage",
    "true or false",
    "invalid_type",
  ],
  ["two choices", { messages: [user], n: 2 }, "n", "exactly one choice", "invalid_value"],
];

describe("malformed chat requests", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub("entries: [{ reply: ok, repeat: true }]");
  });
  afterAll(() => h.close());

  it.each(corpus)("answers 400 naming the problem for %s", async (_what, body, param, phrase, code) => {
    const r = await rawRequest(h.base, "POST", "/v1/chat/completions", body);
    expect(r.status).toBe(400);
    expect(r.headers).toContainEqual(["content-type", "application/json"]);
    const { error } = JSON.parse(String(r.body));
    expect(Object.keys(error)).toEqual(["message", "type", "param", "code"]);
    expect(error).toMatchObject({ type: "invalid_request_error", param, code });
    expect(error.message).toContain(phrase);
  });

  it("records nothing for a refused request", () => {
    expect(h.stub.episode("default").calls).toHaveLength(0);
  });

  it("answers an invalid session name with 400 in the same shape", async () => {
    const r = await rawRequest(h.base, "POST", "/v1/chat/completions", { messages: [user] }, { "x-modelstub-session": "no spaces" });
    expect(r.status).toBe(400);
    expect(JSON.parse(String(r.body)).error.message).toMatch(/^invalid session name "no spaces"/);
  });

  it("answers unknown routes with 404 and wrong methods with 405, in the same shape", async () => {
    const missing = await rawRequest(h.base, "GET", "/v2/chat");
    expect(missing.status).toBe(404);
    expect(JSON.parse(String(missing.body)).error.message).toContain("POST /v1/chat/completions");
    const wrong = await rawRequest(h.base, "GET", "/v1/chat/completions");
    expect(wrong.status).toBe(405);
    expect(wrong.headers).toContainEqual(["allow", "POST"]);
  });

  it("accepts unknown fields, null optionals and developer messages", async () => {
    const r = await rawRequest(h.base, "POST", "/v1/chat/completions", {
      messages: [{ role: "developer", content: "be brief" }, user],
      temperature: null,
      user: "someone",
      tool_choice: "auto",
      response_format: { type: "text" },
    });
    expect(r.status).toBe(200);
    expect(h.stub.episode("default").calls[0]!.request!.sampling).toBeUndefined();
  });
});
