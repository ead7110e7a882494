import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpStub, type HttpStub } from "./http-stub.js";

const script = `
entries:
  - match: { contains: FILTER }
    repeat: true
    reply: { text: "I cannot", finish_reason: content_filter }
  - match: { contains: LENGTH }
    repeat: true
    reply: { text: "cut sh", finish_reason: length }
  - match: { contains: TOOLCUT }
    repeat: true
    reply:
      text: "Reading."
      tool_calls: [{ name: read, arguments: { path: a } }, { name: read, arguments: { path: b } }]
      finish_reason: length
  - match: { contains: LIMITED }
    error: { code: RESOURCE_EXHAUSTED, message: "slow down" }
  - repeat: true
    reply: "fine"
`;

type Item = { type: string; status: string };

describe("OpenAI Responses: incomplete answers and request ids, through the official client", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());
  const client = (session: string) => new OpenAI({ baseURL: `${h.base}/v1`, apiKey: "x", maxRetries: 0, defaultHeaders: { "x-modelstub-session": session } });

  it("answers a content_filter reply as an incomplete response, the reason named and its message item incomplete", async () => {
    const r = await client("filter").responses.create({ model: "m", input: "FILTER" });
    expect([r.status, r.incomplete_details]).toEqual(["incomplete", { reason: "content_filter" }]);
    expect((r.output as Item[]).map((i) => [i.type, i.status])).toEqual([["message", "incomplete"]]);
  });

  it("marks only the last item of a reply cut at its token limit incomplete: the one it was cut off in", async () => {
    const r = await client("toolcut").responses.create({ model: "m", input: "TOOLCUT" });
    expect([r.status, r.incomplete_details]).toEqual(["incomplete", { reason: "max_output_tokens" }]);
    expect((r.output as Item[]).map((i) => [i.type, i.status])).toEqual([
      ["message", "completed"],
      ["function_call", "completed"],
      ["function_call", "incomplete"],
    ]);
  });

  it("streams the same: the last item done as incomplete, then response.incomplete equal to the unary answer", async () => {
    for (const input of ["FILTER", "LENGTH", "TOOLCUT"]) {
      const unary = await client(`u-${input}`).responses.create({ model: "m", input });
      const events: { type: string; item?: Item; response?: unknown }[] = [];
      for await (const e of await client(`s-${input}`).responses.create({ model: "m", input, stream: true })) events.push(e as (typeof events)[number]);
      const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item!.status);
      expect(done.at(-1), input).toBe("incomplete");
      expect(
        done.slice(0, -1).every((s) => s === "completed"),
        input,
      ).toBe(true);
      const last = events.at(-1)!;
      expect(last.type, input).toBe("response.incomplete");
      // Two sessions: the ids differ by the session name only.
      expect(JSON.stringify(last.response).replaceAll(`s-${input}`, `u-${input}`), input).toBe(JSON.stringify(unary).replace(/,"output_text":"[^"]*"/, ""));
    }
  });

  it("names every answer of a call that ran with x-request-id, errors included, as the SDK reads it", async () => {
    const ok = await client("ids").responses.create({ model: "m", input: "hi" });
    expect(ok._request_id).toBe("req_gen-ids-1");
    const err = await client("ids")
      .responses.create({ model: "m", input: "LIMITED" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).requestID).toBe("req_gen-ids-2");
  });

  it("reads a tool whose type is null as a function tool: null means not sent", async () => {
    const r = await fetch(`${h.base}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "hi", tools: [{ type: null, name: "read", parameters: { type: "object" } }] }),
    });
    expect(r.status).toBe(200);
  });
});
