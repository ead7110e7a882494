import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, startHttpStub, type HttpStub, type RawExchange } from "./http-stub.js";

/*
 * Issue 27, item 2: the HTTP dialects applied their depth and count limits after a whole
 * JSON.parse (a 3.1 MB body of 1.04 million `{}` messages took 0.3 to 2.4 s to be refused, a
 * 4 MB body nested 2 million deep 0.3 to 12.5 s, while every other caller waited), and echoed a
 * 3 MB `role` or `type` back whole in the 400. The bounds now hold on the body's text before it
 * is parsed, and every echoed value is clipped as gRPC clips it. No timings here: that the
 * refusal comes before the parse shows in bodies JSON.parse cannot read at all, which are
 * refused for the bound they pass first, as the parse never runs.
 */

/** The three dialects: where they are served, a body with `list` as their list of turns, and their error's parts. */
const dialects = [
  { name: "chat completions", path: "/v1/chat/completions", list: "messages", holds: "messages", body: (list: string) => `{"messages":${list}}` },
  { name: "Responses", path: "/v1/responses", list: "input", holds: "items", body: (list: string) => `{"input":${list}}` },
  {
    name: "Anthropic Messages",
    path: "/v1/messages",
    list: "messages",
    holds: "messages",
    body: (list: string) => `{"model":"m","max_tokens":1,"messages":${list}}`,
  },
];

/** The error of an answer in either shape: OpenAI's `{error:{message,code,param}}` or Anthropic's `{type:"error",error:{type,message}}`. */
function errorOf(r: RawExchange): { message: string; code?: string; param?: string | null; type: string } {
  const body = JSON.parse(String(r.body)) as { error: { message: string; code?: string; param?: string | null; type: string } };
  return body.error;
}

const million = `[${Array(1_040_000).fill("{}").join(",")}]`;
const threeMegabytes = "x".repeat(3_000_000);
/** What a clipped 3 MB value reads as: its first 140 characters, then its length. */
const clipped = `"${"x".repeat(140)}"... (3000000 characters)`;

describe("HTTP bodies past a bound, refused before they are parsed", () => {
  let s: HttpStub;
  beforeAll(async () => {
    s = await startHttpStub("entries:\n  - repeat: true\n    match: { contains: hi }\n    reply: ok\n");
  });
  afterAll(() => s.close());

  describe.each(dialects)("on $name", (d) => {
    it(`refuses 1.04 million {} in ${d.list} with a 400 that gives the whole count and the limit`, async () => {
      const r = await rawRequest(s.base, "POST", d.path, d.body(million), { "x-modelstub-session": "hostile" });
      expect(r.status).toBe(400);
      const e = errorOf(r);
      expect(e.message.startsWith(`${d.list} holds 1040000 ${d.holds}; modelstub reads at most 10000 in a request`), e.message).toBe(true);
      expect(s.stub.episode("hostile").calls).toHaveLength(0);
    });

    it(`refuses them before parsing: the same 400 when the body's end is not JSON`, async () => {
      // JSON.parse would stop at the end ("not valid JSON"); the count is passed long before it.
      const r = await rawRequest(s.base, "POST", d.path, `${d.body(million)} and then some`);
      expect(r.status).toBe(400);
      expect(errorOf(r).message).toContain(`${d.list} holds 1040000 ${d.holds}`);
    });

    it("refuses a body nested 2 million deep, naming where the depth passed 128", async () => {
      const r = await rawRequest(s.base, "POST", d.path, d.body("[".repeat(2_000_000) + "]".repeat(2_000_000)));
      expect(r.status).toBe(400);
      const e = errorOf(r);
      expect(e.message).toContain(`the request body nests objects and lists deeper than 128 levels (at ${d.list}[0][0][0]`);
      expect(r.body.length).toBeLessThan(1024);
    });

    it("refuses 4 MB of [ as soon as the depth passes 128, without waiting for the end", async () => {
      // Not JSON at all (nothing closes): only a check that runs before JSON.parse can name the depth.
      const r = await rawRequest(s.base, "POST", d.path, d.body("[".repeat(4_000_000)));
      expect(r.status).toBe(400);
      expect(errorOf(r).message).toContain("deeper than 128 levels");
    });

    it("refuses a body of more than 250,000 JSON values, naming where the bound passed", async () => {
      const values = `[{"role":"user","content":"hi","padding":[${Array(300_000).fill("0").join(",")}]}]`;
      const r = await rawRequest(s.base, "POST", d.path, d.body(values));
      expect(r.status).toBe(400);
      const e = errorOf(r);
      expect(e.message).toContain("the request body holds more than 250000 JSON values");
      expect(e.message).toContain(`; value 250001 is ${d.list}[0].padding[`);
    });

    it("leaves the connection open for the next request after a refusal", async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const ports = new Set<number>();
        const send = (body: string) =>
          new Promise<number>((resolve, reject) => {
            const req = request(new URL(d.path, s.base), { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
              ports.add(res.socket.localPort!);
              res.resume();
              res.on("end", () => resolve(res.statusCode!));
            });
            req.on("error", reject);
            req.end(body);
          });
        expect(await send(d.body(million))).toBe(400);
        expect(await send(d.body('[{"role":"user","content":"hi"}]'))).toBe(200);
        expect(ports.size).toBe(1);
      } finally {
        agent.destroy();
      }
    });
  });
});

describe("values a request echoes in an error, clipped", () => {
  let s: HttpStub;
  beforeAll(async () => {
    s = await startHttpStub("entries:\n  - repeat: true\n    match: { contains: hi }\n    reply: ok\n");
  });
  afterAll(() => s.close());

  it.each([
    [
      "a 3 MB role on chat completions",
      "/v1/chat/completions",
      { messages: [{ role: threeMegabytes, content: "hi" }] },
      "messages[0].role: expected one of system, developer, user, assistant, tool, got ",
    ],
    [
      "a 3 MB content part type on chat completions",
      "/v1/chat/completions",
      { messages: [{ role: "user", content: [{ type: threeMegabytes }] }] },
      "messages[0].content[0].type: modelstub reads text parts only",
    ],
    [
      "a 3 MB tool type on chat completions",
      "/v1/chat/completions",
      { messages: [{ role: "user", content: "hi" }], tools: [{ type: threeMegabytes }] },
      "tools[0].type: modelstub offers function tools only, not ",
    ],
    [
      "a 3 MB item type on Responses",
      "/v1/responses",
      { input: [{ type: threeMegabytes }] },
      "input[0].type: modelstub reads message, function_call, function_call_output, reasoning and item_reference items, not ",
    ],
    [
      "a 3 MB role on Responses",
      "/v1/responses",
      { input: [{ role: threeMegabytes, content: "hi" }] },
      "input[0].role: expected one of user, system, developer, assistant, got ",
    ],
    [
      "a 3 MB role on Anthropic Messages",
      "/v1/messages",
      { model: "m", max_tokens: 1, messages: [{ role: threeMegabytes, content: "hi" }] },
      "messages[0].role: expected user or assistant (or system), got ",
    ],
    [
      "a 3 MB block type on Anthropic Messages",
      "/v1/messages",
      { model: "m", max_tokens: 1, messages: [{ role: "user", content: [{ type: threeMegabytes }] }] },
      "messages[0].content[0].type: modelstub reads text and tool_result blocks in a user turn, not ",
    ],
  ])("answers %s with a 400 under 1 KB that quotes 140 characters of it", async (_what, path, body, message) => {
    const r = await rawRequest(s.base, "POST", path, body);
    expect(r.status).toBe(400);
    expect(r.body.length).toBeLessThan(1024);
    const e = errorOf(r);
    expect(e.message.startsWith(message), e.message).toBe(true);
    expect(e.message).toContain(clipped);
  });

  it.each(dialects)("answers a miss by a 3 MB model id on $name with the id clipped", async (d) => {
    const body = JSON.parse(d.body('[{"role":"user","content":"no match here"}]')) as Record<string, unknown>;
    const r = await rawRequest(s.base, "POST", d.path, { ...body, model: threeMegabytes });
    expect(r.status).toBe(404);
    expect(r.body.length).toBeLessThan(1024);
    expect(errorOf(r).message).toContain(`matches the request (model ${clipped}, turn 0`);
  });

  it("answers a 3 MB model id on GET /v1/models/{id} with the id clipped", async () => {
    const r = await rawRequest(s.base, "GET", `/v1/models/${"y".repeat(12_000)}`);
    expect(r.status).toBe(404);
    expect(r.body.length).toBeLessThan(1024);
    expect(errorOf(r).message).toContain(`"${"y".repeat(140)}"... (12000 characters)`);
  });
});

describe("bodies within the bounds, read as before", () => {
  let s: HttpStub;
  beforeAll(async () => {
    s = await startHttpStub("entries:\n  - repeat: true\n    reply: 'seen: {{last_user}}'\n");
  });
  afterAll(() => s.close());

  it("reads brackets, braces, commas and escaped quotes inside strings as text, not structure", async () => {
    const text = `hi ${"[{".repeat(200)} \\" \\\\" ${"]},".repeat(20_000)} \u00e9 \ud83d\ude00`;
    const r = await rawRequest(s.base, "POST", "/v1/chat/completions", { messages: [{ role: "user", content: text }], stop: ["[", "]]]"] });
    expect(r.status).toBe(200);
    expect(JSON.parse(String(r.body)).choices[0].message.content).toBe(`seen: ${text}`);
  });

  it("counts a key written with escapes as JSON.parse reads it", async () => {
    const r = await rawRequest(
      s.base,
      "POST",
      "/v1/chat/completions",
      `{"\\u006dessages":[${Array(10_001).fill('{"role":"user","content":"hi"}').join(",")}]}`,
    );
    expect(r.status).toBe(400);
    expect(errorOf(r).message).toContain("messages holds 10001 messages");
  });

  it("serves a request at the limits: 10,000 messages, 1,000 tools with schemas 128 deep in all", async () => {
    const schema = `${'{"a":'.repeat(123)}{}${"}".repeat(123)}`;
    const tools = Array(1000).fill(`{"type":"function","function":{"name":"t","parameters":${schema}}}`).join(",");
    const messages = Array(10_000).fill('{"role":"user","content":"hi"}').join(",");
    const r = await rawRequest(
      s.base,
      "POST",
      "/v1/chat/completions",
      `{"messages":[${messages}],"tools":[${tools}],"stop":[${Array(1000).fill('"x"').join(",")}]}`,
    );
    expect(r.status).toBe(200);
  });
});
