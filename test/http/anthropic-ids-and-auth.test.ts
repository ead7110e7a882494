import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { startHttpServer, type RunningHttpServer } from "../../src/http/start-http-server.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { rawRequest, startHttpStub, type HttpStub } from "./http-stub.js";

const script = `
steps:
  limited:
    - error: { code: RESOURCE_EXHAUSTED, message: "slow down" }
entries:
  - repeat: true
    reply: "fine"
`;

const ask = { model: "claude-stub", max_tokens: 16, messages: [{ role: "user" as const, content: "hi" }] };
const header = (r: { headers: [string, string][] }, name: string) => r.headers.find(([k]) => k === name)?.[1];

describe("Anthropic request ids and the front's own errors", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it("names the error answer of a call that ran by its request id, in the header and the body, as the SDK reads them", async () => {
    const c = new Anthropic({ baseURL: h.base, apiKey: "x", maxRetries: 0, defaultHeaders: { "x-modelstub-session": "ids", "x-modelstub-step": "limited" } });
    const err = await c.messages.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    const e = err as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.requestID).toBe("req_gen-ids-1");
    expect(e.error).toEqual({ type: "error", error: { type: "rate_limit_error", message: "slow down" }, request_id: "req_gen-ids-1" });
  });

  it("says request_id null, and sends no request-id, for a request refused before it ran", async () => {
    const r = await rawRequest(h.base, "POST", "/v1/messages", { model: "m", messages: [] }, { "x-modelstub-session": "refused" });
    expect(r.status).toBe(400);
    expect(JSON.parse(String(r.body))).toMatchObject({ type: "error", error: { type: "invalid_request_error" }, request_id: null });
    expect(header(r, "request-id")).toBeUndefined();
    expect(h.stub.episode("refused").calls).toHaveLength(0);
  });

  it("answers an endpoint under /v1/messages that it does not serve with Anthropic's not_found_error, which the SDK reads", async () => {
    const c = new Anthropic({ baseURL: h.base, apiKey: "x", maxRetries: 0 });
    const err = await c.messages.batches.retrieve("msgbatch_1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    const body = (err as InstanceType<typeof Anthropic.NotFoundError>).error as { type: string; error: { type: string; message: string } };
    expect([body.type, body.error.type]).toEqual(["error", "not_found_error"]);
    expect(body.error.message).toMatch(/^no route GET \/v1\/messages\/batches\/msgbatch_1/);
  });

  it("counts a request's tokens by the token rule, as the same call's answer reports them, and records nothing", async () => {
    const c = new Anthropic({ baseURL: h.base, apiKey: "x", maxRetries: 0, defaultHeaders: { "x-modelstub-session": "counts" } });
    const conversation = {
      model: "claude-stub",
      system: "Be brief.",
      tools: [{ name: "get_weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } }],
      messages: [
        { role: "user" as const, content: "Weather in Paris?" },
        { role: "assistant" as const, content: [{ type: "tool_use" as const, id: "t1", name: "get_weather", input: { city: "Paris" } }] },
        { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "t1", content: "18 °C" }] },
      ],
    };
    // "Be brief." 3, "Weather in Paris?" 5, get_weather 3, {"city":"Paris"} 4, "18 °C" 2: the tools offered count for nothing.
    expect(await c.messages.countTokens(conversation)).toEqual({ input_tokens: 17 });
    expect(h.stub.episode("counts").calls).toHaveLength(0);
    expect((await c.messages.create({ ...conversation, max_tokens: 16 })).usage.input_tokens).toBe(17);
    // A body a model call would refuse is refused alike, in Anthropic's shape.
    const err = await c.messages.countTokens({ model: "claude-stub", messages: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).toMatch(/messages: expected at least one turn/);
  });
});

describe("the HTTP front with a token, from Anthropic's clients", () => {
  let server: RunningHttpServer;
  let base: string;
  beforeAll(async () => {
    const stub = createStub({ script: loadScriptText(script, "test.yaml"), clock: createVirtualClock() });
    server = await startHttpServer({ stub, address: "127.0.0.1:0", log: () => {}, token: "s3cret-token" });
    base = `http://${server.address}`;
  });
  afterAll(() => server.close(100));

  it("takes the token as x-api-key, the header Anthropic's API reads it from", async () => {
    const r = await rawRequest(base, "POST", "/v1/messages", ask, { "x-api-key": "s3cret-token" });
    expect(r.status).toBe(200);
  });

  it("takes it from the SDK given the token as its apiKey, however the SDK sends it", async () => {
    const m = await new Anthropic({ baseURL: base, apiKey: "s3cret-token", maxRetries: 0 }).messages.create(ask);
    expect(m.content).toEqual([{ type: "text", text: "fine" }]);
  });

  it("refuses a wrong x-api-key with 401 in Anthropic's shape", async () => {
    const r = await rawRequest(base, "POST", "/v1/messages", ask, { "x-api-key": "guess" });
    expect(r.status).toBe(401);
    expect(JSON.parse(String(r.body))).toMatchObject({ type: "error", error: { type: "authentication_error" }, request_id: null });
  });
});
