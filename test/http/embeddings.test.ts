import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallMethod, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { scriptFromEpisode } from "../../src/script/episode-to-script.js";
import { startHttpStub, type HttpStub } from "./http-stub.js";

const script = `
entries:
  - match: { contains: hello }
    repeat: true
    reply: "Hello there."
embeddings:
  - input: cat
    vector: [3, 4]
  - input: wide
    vector: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
`;

/** The derived vector of "hello", its first four components (docs/embeddings.md, "Test vectors"). */
const helloFirstFour = [-0.0007669313345104456, 0.028960857540369034, -0.022996453568339348, 0.02486371621489525];
/** The derived vector of "hello" at 8 dimensions, whole. */
const helloAt8 = [
  -0.009743431583046913, 0.36793142557144165, -0.29215702414512634, 0.31587955355644226, 0.27675092220306396, -0.4331075847148895, -0.4675534665584564,
  0.44341447949409485,
];

/** Sum of squares in doubles: 1 within float32's rounding for a unit vector. */
const squares = (v: readonly number[]) => v.reduce((n, x) => n + x * x, 0);

/** POSTs a JSON body to `path`; the status and the parsed answer. */
// biome-ignore lint/suspicious/noExplicitAny: an answer of any shape (an embedding list or an error), read by each test as it expects
async function post(h: HttpStub, path: string, body: unknown, session = "raw"): Promise<{ status: number; json: any; episode: string | null }> {
  const res = await fetch(`${h.base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-modelstub-session": session },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json(), episode: res.headers.get("x-modelstub-episode") };
}

describe("POST /v1/embeddings with the official openai client", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it("answers the SDK's default call (base64, decoded as float32) with the derived unit vector of 1536 dimensions", async () => {
    const r = await h.client({ session: "sdk-default" }).embeddings.create({ model: "text-embedding-3-small", input: "hello" });
    expect(r.object).toBe("list");
    expect(r.model).toBe("text-embedding-3-small");
    expect(r.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    expect(r.data).toHaveLength(1);
    expect(r.data[0]!.object).toBe("embedding");
    expect(r.data[0]!.index).toBe(0);
    expect(r.data[0]!.embedding).toHaveLength(1536);
    expect(r.data[0]!.embedding.slice(0, 4)).toEqual(helloFirstFour);
    expect(Math.abs(squares(r.data[0]!.embedding) - 1)).toBeLessThan(1e-6);
  });

  it("gives the same numbers as floats, with `dimensions` as many components", async () => {
    const client = h.client({ session: "sdk-float" });
    const asFloats = await client.embeddings.create({ model: "m", input: ["hello", "hello"], encoding_format: "float", dimensions: 8 });
    const asBase64 = await client.embeddings.create({ model: "m", input: "hello", dimensions: 8 });
    expect(asFloats.data.map((d) => d.embedding)).toEqual([helloAt8, helloAt8]);
    expect(asFloats.data.map((d) => d.index)).toEqual([0, 1]);
    expect(asBase64.data[0]!.embedding).toEqual(helloAt8);
  });

  it("answers the script's vector for its exact input, normalized and padded with zeros, and derives every other input", async () => {
    const r = await h.client({ session: "scripted" }).embeddings.create({ model: "m", input: ["cat", "Cat", "cat "], encoding_format: "float", dimensions: 4 });
    expect(r.data[0]!.embedding).toEqual([Math.fround(0.6), Math.fround(0.8), 0, 0]);
    expect(r.data[1]!.embedding).not.toEqual(r.data[0]!.embedding);
    expect(r.data[2]!.embedding).not.toEqual(r.data[0]!.embedding);
  });

  it("records each call in the session's episode, in call order with its model calls, with its vectors and usage", async () => {
    const client = h.client({ session: "recorded" });
    await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello" }] });
    await client.embeddings.create({ model: "emb", input: ["cat", "dog"], dimensions: 2 });
    await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello again" }] });
    const calls = h.stub.episode("recorded").calls;
    expect(calls.map((c) => [Number(c.sequence), c.method])).toEqual([
      [1, CallMethod.GENERATE],
      [2, CallMethod.EMBED],
      [3, CallMethod.GENERATE],
    ]);
    const embed = calls[1]!;
    expect(embed.request).toBeUndefined();
    expect(embed.outcome).toBe(Outcome.OK);
    expect(embed.embedRequest).toMatchObject({ model: "emb", input: ["cat", "dog"], dimensions: 2 });
    expect(embed.embedResponse!.data.map((d) => d.entry)).toEqual(["embeddings[0]", ""]);
    expect(embed.embedResponse!.data[0]!.embedding).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect(embed.usage).toMatchObject({ inputTokens: 2, outputTokens: 0, totalTokens: 2 });
  });

  it("is left out of the script `script from-episode` writes, which says a scripted vector is not written back", () => {
    const made = scriptFromEpisode(h.stub.episode("recorded"), "recorded.binpb");
    // The two model calls, answered by one repeating entry; nothing of the embeddings call.
    expect(made.draft.lists.flatMap((l) => l.entries)).toHaveLength(1);
    expect(made.problems).toContain(
      "call 2: an embeddings call answered by the script's embeddings: vectors, which are not written back; copy its embeddings: section",
    );
  });

  it("is served at /embeddings and under OpenRouter's /api/v1 too, naming the episode in x-modelstub-episode", async () => {
    for (const path of ["/v1/embeddings", "/embeddings", "/api/v1/embeddings"]) {
      const r = await post(h, path, { model: "m", input: "hello", dimensions: 8 }, "paths");
      expect(r.status, path).toBe(200);
      expect(r.json.data[0].embedding, path).toEqual(helloAt8);
      expect(r.episode, path).toBe(h.stub.episodeIdOf("paths"));
    }
    expect(h.stub.episode("paths").calls).toHaveLength(3);
  });

  it.each([
    ["no input", { model: "m" }, "input", "missing_required_parameter"],
    ["no model", { input: "x" }, "model", "missing_required_parameter"],
    ["a number as input", { model: "m", input: 3 }, "input", "invalid_type"],
    ["a token array", { model: "m", input: [15339, 1917] }, "input", "invalid_value"],
    ["a list of token arrays", { model: "m", input: ["x", [15339]] }, "input[1]", "invalid_value"],
    ["an object in the list", { model: "m", input: ["x", {}] }, "input[1]", "invalid_type"],
    ["an empty list", { model: "m", input: [] }, "input", "invalid_value"],
    ["2,049 texts", { model: "m", input: Array.from({ length: 2049 }, () => "x") }, "input", "too_many_items"],
    ["more numbers than a request may hold", { model: "m", input: Array.from({ length: 2048 }, () => "x"), dimensions: 2048 }, "input", "too_many_items"],
    ["dimensions 0", { model: "m", input: "x", dimensions: 0 }, "dimensions", "invalid_value"],
    ["dimensions past the limit", { model: "m", input: "x", dimensions: 4097 }, "dimensions", "invalid_value"],
    ["dimensions as text", { model: "m", input: "x", dimensions: "8" }, "dimensions", "invalid_type"],
    ["an unknown encoding", { model: "m", input: "x", encoding_format: "hex" }, "encoding_format", "invalid_value"],
  ])("refuses %s with a 400 in OpenAI's shape naming the field, and records nothing", async (_what, body, param, code) => {
    const r = await post(h, "/v1/embeddings", body, "refused");
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: "invalid_request_error", param, code });
    expect(h.stub.episode("refused").calls).toHaveLength(0);
  });

  it("answers a scripted vector longer than the dimensions asked for with a 400 naming the entry, recorded as an error", async () => {
    const r = await post(h, "/v1/embeddings", { model: "m", input: ["hello", "wide"], dimensions: 8 }, "too-wide");
    expect(r.status).toBe(400);
    expect(r.json.error.message).toBe(
      "input[1] is answered by the script's embeddings[1], a vector of 10 dimensions, more than the 8 the request asks for; ask for dimensions 10 or more, or give the script a shorter vector",
    );
    const [call] = h.stub.episode("too-wide").calls;
    expect(call!.outcome).toBe(Outcome.ERROR);
    expect(call!.embedResponse).toBeUndefined();
  });
});

describe("an episode with embeddings calls", () => {
  /** One run: a fresh server, a model call and embeddings calls in one session; the episode's bytes. */
  async function run(): Promise<Uint8Array> {
    const h = await startHttpStub(script);
    try {
      const client = h.client({ session: "twice" });
      await client.embeddings.create({ model: "emb", input: ["cat", "a dog"] });
      await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello" }] });
      await client.embeddings.create({ model: "emb", input: "hello", encoding_format: "float", dimensions: 64 });
      return h.stub.episodeBytes("twice");
    } finally {
      await h.close();
    }
  }

  it("has the same bytes in two runs", async () => {
    const first = await run();
    const second = await run();
    expect(first.length).toBeGreaterThan(2 * 1536 * 4);
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
  });
});
