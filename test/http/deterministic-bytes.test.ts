import { describe, expect, it } from "vitest";
import { rawRequest, sseData, startHttpStub, type RawExchange } from "./http-stub.js";

const script = `
models:
  - { id: stub-a, prompt_price: "0.000001", completion_price: "0.000002", context_length: 8000 }
  - { id: stub-img, output_modalities: [image] }
entries:
  - latency: { first_byte: 1500ms, per_chunk: 200ms }
    reply: "The first answer arrives late."
  - reply:
      text: "Calling."
      tool_calls:
        - name: bash
          arguments: { command: "echo hi" }
  - error: { code: RESOURCE_EXHAUSTED, message: "quota", trailers: { retry-after: "2" } }
  - reply: "cut short"
    break: { after_chunks: 1, then: error }
  - reply: "unary at the end"
`;

const chat = (content: string, extra: object = {}) => ({ model: "stub-a", messages: [{ role: "user", content }], ...extra });

/** One scripted run over raw HTTP: every exchange, in order. */
async function run(): Promise<RawExchange[]> {
  const h = await startHttpStub(script);
  try {
    const s = { "x-modelstub-session": "bytes" };
    const out: RawExchange[] = [];
    out.push(await rawRequest(h.base, "POST", "/v1/chat/completions", chat("one", { stream: true, stream_options: { include_usage: true } }), s));
    out.push(await rawRequest(h.base, "POST", "/chat/completions", chat("two", { stream: true }), s));
    out.push(await rawRequest(h.base, "POST", "/v1/chat/completions", chat("three"), s));
    out.push(await rawRequest(h.base, "POST", "/v1/chat/completions", chat("four", { stream: true }), s));
    out.push(await rawRequest(h.base, "POST", "/v1/chat/completions", chat("five", { temperature: 0.2 }), s));
    out.push(await rawRequest(h.base, "POST", "/v1/chat/completions", chat("six"), s));
    out.push(await rawRequest(h.base, "POST", "/v1/chat/completions", "{not json", s));
    out.push(await rawRequest(h.base, "GET", "/v1/models", undefined, s));
    out.push(await rawRequest(h.base, "GET", "/models?output_modalities=all", undefined, s));
    out.push(await rawRequest(h.base, "GET", "/models?output_modalities=image", undefined, s));
    return out;
  } finally {
    await h.close();
  }
}

describe("wire output of the HTTP front", () => {
  it("is byte-identical across two runs of the same script: statuses, headers, bodies and SSE streams", async () => {
    const first = await run();
    const second = await run();
    expect(second.map((x) => x.status)).toEqual(first.map((x) => x.status));
    expect(second.map((x) => x.headers)).toEqual(first.map((x) => x.headers));
    for (let i = 0; i < first.length; i++) expect(second[i]!.body.equals(first[i]!.body), `exchange ${i}`).toBe(true);
    expect(first.map((x) => x.status)).toEqual([200, 200, 429, 200, 200, 400, 400, 200, 200, 200]);
    expect(first.some((x) => x.headers.some(([k]) => k === "date"))).toBe(false);
    // Only who answered differs between the two servers: every answer names its instance.
    expect(first.every((x) => x.identity.some(([k]) => k === "x-modelstub-instance"))).toBe(true);
  });

  it("derives created from the declared timeline and ids from session and sequence", async () => {
    const [late, tools, limited, broken] = await run();
    const lateChunks = sseData(late!.body);
    expect(lateChunks[lateChunks.length - 1]).toBe("[DONE]");
    const firstChunk = JSON.parse(lateChunks[0]!);
    expect([firstChunk.id, firstChunk.created]).toEqual(["chatcmpl-gen-bytes-1", 1_700_000_000]);
    // The first call declares 1.5 s plus four 200 ms chunk waits: the second starts 2.3 s in.
    const toolChunk = JSON.parse(sseData(tools!.body)[0]!);
    expect([toolChunk.id, toolChunk.created]).toEqual(["chatcmpl-gen-bytes-2", 1_700_000_002]);
    expect(sseData(tools!.body).map((d) => (d === "[DONE]" ? d : JSON.parse(d).choices[0].delta))).toEqual([
      { role: "assistant", content: "" },
      { content: "Calling." },
      { tool_calls: [{ index: 0, id: "call-bytes-2-0", type: "function", function: { name: "bash", arguments: "" } }] },
      // Arguments stream in fragments cut by the script's chunking rule (words by default).
      { tool_calls: [{ index: 0, function: { arguments: '{"command":"echo ' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'hi"}' } }] },
      {},
      "[DONE]",
    ]);
    expect(limited!.headers.filter(([k]) => k.startsWith("retry-after"))).toEqual([
      ["retry-after-ms", "2000"],
      ["retry-after", "2"],
    ]);
    const brokenData = sseData(broken!.body);
    expect(brokenData).not.toContain("[DONE]");
    expect(JSON.parse(brokenData[brokenData.length - 1]!)).toEqual({
      error: { message: "stream broken by the script after 1 chunks", type: "server_error", param: null, code: "unavailable" },
    });
  });

  it("lists models in OpenAI's shape at /v1/models and in OpenRouter's catalog shape at /models", async () => {
    const out = await run();
    const openai = JSON.parse(String(out[7]!.body));
    expect(openai).toEqual({
      object: "list",
      data: [
        { id: "stub-a", object: "model", created: 1_700_000_000, owned_by: "modelstub" },
        { id: "stub-img", object: "model", created: 1_700_000_000, owned_by: "modelstub" },
      ],
    });
    const catalog = JSON.parse(String(out[8]!.body));
    expect(catalog.data[0]).toEqual({
      id: "stub-a",
      canonical_slug: "stub-a",
      hugging_face_id: "",
      name: "stub-a",
      created: 1_700_000_000,
      description: "",
      context_length: 8000,
      architecture: { modality: "text->text", input_modalities: ["text"], output_modalities: ["text"], tokenizer: "Other", instruct_type: null },
      pricing: { prompt: "0.000001", completion: "0.000002" },
      top_provider: { context_length: 8000, max_completion_tokens: null, is_moderated: false },
      per_request_limits: null,
      supported_parameters: ["max_tokens", "seed", "stop", "temperature", "tool_choice", "tools", "top_p"],
      default_parameters: { temperature: null, top_p: null, frequency_penalty: null },
    });
    expect(JSON.parse(String(out[9]!.body)).data.map((m: { id: string }) => m.id)).toEqual(["stub-img"]);
  });
});
