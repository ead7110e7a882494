import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/modelstub/v1/model_pb.js";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

/*
 * The Gemini dialect over raw HTTP: what a request maps to, the stream's bytes, refusals in
 * Google's error shape naming the field, the token as x-goog-api-key or ?key=.
 */

const script = `
entries:
  - name: tools
    match: { contains: tools }
    repeat: true
    reply:
      text: "Two calls."
      chunking: { chars: 5 }
      tool_calls:
        - { name: bash, arguments: { command: ls } }
        - { name: read, arguments: { path: /etc/hosts } }
  - name: echo
    repeat: true
    reply: "fine"
steps:
  slow:
    - timeout: true
`;

const ask = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
const call = "/v1beta/models/gemini-stub:generateContent";
const streamCall = "/v1beta/models/gemini-stub:streamGenerateContent?alt=sse";

/** The `data:` payloads of a Gemini SSE body (events end with CRLF CRLF), parsed. */
function events(body: Buffer): unknown[] {
  return String(body)
    .split("\r\n\r\n")
    .filter((e) => e !== "")
    .map((e) => JSON.parse(e.replace(/^data: /, "")) as unknown);
}

describe("the Gemini dialect over HTTP", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it("maps contents, systemInstruction, functionDeclarations and generationConfig to the engine's request, the model from the path", async () => {
    const body = {
      systemInstruction: { parts: [{ text: "Be " }, { text: "terse." }] },
      contents: [
        { role: "user", parts: [{ text: "run it" }] },
        { role: "model", parts: [{ text: "ok", thought: true }, { functionCall: { name: "bash", args: { command: "ls" } } }] },
        { parts: [{ functionResponse: { name: "bash", response: { exit: 0 } } }, { text: "and?" }] },
      ],
      tools: [{ functionDeclarations: [{ name: "bash", description: "Runs.", parameters: { type: "OBJECT" } }, { name: "noop" }] }],
      generationConfig: { temperature: 0.5, topP: 0.9, maxOutputTokens: 64, stopSequences: ["END"], topK: 3 },
    };
    const r = await rawRequest(h.base, "POST", "/v1beta/models/openai/gpt-4o:generateContent", body, { "x-modelstub-session": "mapped" });
    expect(r.status).toBe(200);
    const request = h.stub.episode("mapped").calls[0]!.request!;
    expect(request.model).toBe("openai/gpt-4o");
    // A call without an id has the empty id, and its result names the function instead.
    expect(request.messages.map((m) => [Role[m.role], m.content, m.toolCallId, m.name, m.toolCalls.map((c) => [c.id, c.name, c.arguments])])).toEqual([
      ["SYSTEM", "Be terse.", "", "", []],
      ["USER", "run it", "", "", []],
      ["ASSISTANT", "", "", "", [["", "bash", '{"command":"ls"}']]],
      ["TOOL", '{"exit":0}', "", "bash", []],
      ["USER", "and?", "", "", []],
    ]);
    expect(request.tools.map((t) => [t.name, t.description, t.parametersJson])).toEqual([
      ["bash", "Runs.", '{"type":"OBJECT"}'],
      ["noop", "", ""],
    ]);
    expect(request.sampling).toMatchObject({ temperature: 0.5, topP: 0.9, maxTokens: 64, stop: ["END"] });
  });

  it("answers unary with one candidate: the text, a functionCall part per call, STOP and the usage", async () => {
    const r = await rawRequest(h.base, "POST", call, { contents: [{ parts: [{ text: "use tools" }] }] }, { "x-modelstub-session": "unary" });
    expect(JSON.parse(String(r.body))).toEqual({
      candidates: [
        {
          content: {
            parts: [
              { text: "Two calls." },
              { functionCall: { id: "call-unary-1-0", name: "bash", args: { command: "ls" } } },
              { functionCall: { id: "call-unary-1-1", name: "read", args: { path: "/etc/hosts" } } },
            ],
            role: "model",
          },
          finishReason: "STOP",
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number), totalTokenCount: expect.any(Number) },
      modelVersion: "gemini-stub",
      responseId: "gen-unary-1",
    });
  });

  it("streams a text chunk per event, each call whole, the last with the finish and the usage", async () => {
    const r = await rawRequest(h.base, "POST", streamCall, { contents: [{ parts: [{ text: "use tools" }] }] }, { "x-modelstub-session": "stream" });
    expect(r.headers).toContainEqual(["content-type", "text/event-stream; charset=utf-8"]);
    const candidates = events(r.body).map((e) => (e as { candidates: { content: { parts: unknown[] }; finishReason?: string }[] }).candidates[0]!);
    expect(candidates.map((c) => [c.content.parts, c.finishReason])).toEqual([
      [[{ text: "Two c" }], undefined],
      [[{ text: "alls." }], undefined],
      [[{ functionCall: { id: "call-stream-1-0", name: "bash", args: { command: "ls" } } }], undefined],
      [[{ functionCall: { id: "call-stream-1-1", name: "read", args: { path: "/etc/hosts" } } }], "STOP"],
    ]);
    expect(events(r.body).at(-1)).toHaveProperty("usageMetadata");
  });

  it("answers the same request with the same bytes from another server, unary and streamed", async () => {
    const other = await startHttpStub(script);
    try {
      for (const path of [call, streamCall]) {
        const body = { contents: [{ parts: [{ text: "use tools" }] }] };
        const [a, b] = [
          await rawRequest(h.base, "POST", path, body, { "x-modelstub-session": `again-${path.length}` }),
          await rawRequest(other.base, "POST", path, body, { "x-modelstub-session": `again-${path.length}` }),
        ];
        expect(b.body.equals(a.body), path).toBe(true);
        expect(b.headers).toEqual(a.headers);
      }
    } finally {
      await other.close();
    }
  });

  it("refuses a stream without alt=sse: 400 in Google's shape, in no episode", async () => {
    const r = await rawRequest(h.base, "POST", "/v1beta/models/m:streamGenerateContent", ask, { "x-modelstub-session": "no-sse" });
    expect(r.status).toBe(400);
    expect(JSON.parse(String(r.body))).toEqual({ error: { code: 400, message: expect.stringContaining("?alt=sse"), status: "INVALID_ARGUMENT" } });
    expect(h.stub.episode("no-sse").calls).toHaveLength(0);
  });

  for (const [what, body, message] of [
    [
      "a functionCall name that is not a string",
      { contents: [ask.contents[0], { role: "model", parts: [{ functionCall: { name: 3 } }] }] },
      "contents[1].parts[0].functionCall.name: expected a string, got a number (3)",
    ],
    ["no contents", {}, "contents is required"],
    ["an unknown role", { contents: [{ role: "function", parts: [{ text: "x" }] }] }, 'contents[0].role: expected "user" or "model", got "function"'],
    [
      "an image part",
      { contents: [{ parts: [{ inlineData: { mimeType: "image/png", data: "" } }] }] },
      "contents[0].parts[0].inlineData: modelstub reads text, functionCall and functionResponse parts only",
    ],
    ["a search tool", { ...ask, tools: [{ googleSearch: {} }] }, 'tools[0].googleSearch: modelstub offers function declarations only, not "googleSearch"'],
    [
      "a functionResponse without response",
      { contents: [{ parts: [{ functionResponse: { name: "bash" } }] }] },
      "contents[0].parts[0].functionResponse.response is required",
    ],
    [
      "two candidates",
      { ...ask, generationConfig: { candidateCount: 2 } },
      "generationConfig.candidateCount: modelstub answers with exactly one candidate, not 2",
    ],
    ["a long role, quoted clipped", { contents: [{ role: "x".repeat(5000), parts: [{ text: "x" }] }] }, `got "${"x".repeat(140)}"... (5000 characters)`],
  ] as const) {
    it(`refuses ${what} with a 400 in Google's shape naming the field`, async () => {
      const r = await rawRequest(h.base, "POST", call, body);
      expect(r.status).toBe(400);
      const e = (JSON.parse(String(r.body)) as { error: { code: number; message: string; status: string } }).error;
      expect([e.code, e.status]).toEqual([400, "INVALID_ARGUMENT"]);
      expect(e.message).toContain(message);
      expect(e.message.length).toBeLessThan(400);
    });
  }

  it("answers a scripted timeout 504 DEADLINE_EXCEEDED, as Google's APIs do", async () => {
    const r = await rawRequest(h.base, "POST", call, ask, { "x-modelstub-step": "slow" });
    expect(r.status).toBe(504);
    expect(JSON.parse(String(r.body)).error).toMatchObject({ code: 504, status: "DEADLINE_EXCEEDED" });
  });

  it("answers unknown paths under /v1beta, a wrong method and a body past a bound in Google's shape", async () => {
    const unknown = await rawRequest(h.base, "POST", "/v1beta/models/m:countTokens", ask);
    expect([unknown.status, JSON.parse(String(unknown.body)).error.status]).toEqual([404, "NOT_FOUND"]);
    const nowhere = await rawRequest(h.base, "GET", "/v1beta/files");
    expect(JSON.parse(String(nowhere.body)).error).toMatchObject({
      code: 404,
      status: "NOT_FOUND",
      message: expect.stringContaining(":streamGenerateContent?alt=sse"),
    });
    const get = await rawRequest(h.base, "GET", call);
    expect([get.status, JSON.parse(String(get.body)).error.status]).toEqual([405, "UNIMPLEMENTED"]);
    const deep = await rawRequest(h.base, "POST", call, `{"contents":${"[".repeat(200)}${"]".repeat(200)}}`);
    expect([deep.status, JSON.parse(String(deep.body)).error.status]).toEqual([400, "INVALID_ARGUMENT"]);
  });

  it("refuses 1.04 million contents before parsing the body, in Google's shape", async () => {
    const million = `{"contents":[${Array(1_040_000).fill("{}").join(",")}]} and then not JSON`;
    const many = await rawRequest(h.base, "POST", call, million, { "x-modelstub-session": "hostile" });
    expect(many.status).toBe(400);
    expect(JSON.parse(String(many.body)).error).toEqual({
      code: 400,
      status: "INVALID_ARGUMENT",
      message: expect.stringMatching(/^contents holds 1040000 contents; modelstub reads at most 10000 in a request/),
    });
    expect(h.stub.episode("hostile").calls).toHaveLength(0);
  });

  it("keeps GET /v1/models OpenAI's list, and Gemini's when Google's SDK asks", async () => {
    const openai = await rawRequest(h.base, "GET", "/v1/models");
    expect(JSON.parse(String(openai.body))).toMatchObject({ object: "list" });
    const google = await rawRequest(h.base, "GET", "/v1/models", undefined, { "x-goog-api-key": "k" });
    expect(JSON.parse(String(google.body))).toMatchObject({ models: [{ name: expect.stringMatching(/^models\//) }] });
  });
});

describe("the Gemini dialect with a token and a size bound", () => {
  let h: HttpStub;
  let base: string;
  beforeAll(async () => {
    h = await startHttpStub(script, { token: "s3cret-token", maxBodyBytes: 4096 });
    base = h.base;
  });
  afterAll(() => h.close());

  it("takes the token as x-goog-api-key, and as ?key= in the query", async () => {
    expect((await rawRequest(base, "POST", call, ask, { "x-goog-api-key": "s3cret-token" })).status).toBe(200);
    expect((await rawRequest(base, "POST", `${call}?key=s3cret-token`, ask)).status).toBe(200);
  });

  it("takes it from the SDK given the token as its apiKey", async () => {
    const r = await new GoogleGenAI({ apiKey: "s3cret-token", httpOptions: { baseUrl: base } }).models.generateContent({
      model: "gemini-stub",
      contents: "hi",
    });
    expect(r.text).toBe("fine");
  });

  it("answers a body over the size bound 413 in Google's shape", async () => {
    const large = await rawRequest(base, "POST", call, { contents: [{ parts: [{ text: "x".repeat(5000) }] }] }, { "x-goog-api-key": "s3cret-token" });
    expect(large.status).toBe(413);
    expect(JSON.parse(String(large.body))).toEqual({ error: { code: 413, message: "the request body is larger than 4096 bytes", status: "INVALID_ARGUMENT" } });
  });

  it("refuses a wrong key with 401 UNAUTHENTICATED in Google's shape", async () => {
    const r = await rawRequest(base, "POST", call, ask, { "x-goog-api-key": "guess" });
    expect(r.status).toBe(401);
    expect(JSON.parse(String(r.body))).toEqual({ error: { code: 401, message: expect.stringContaining("x-goog-api-key"), status: "UNAUTHENTICATED" } });
  });
});
