import { Code } from "../../src/index.js";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import { startHttpStub, type HttpStub } from "./http-stub.js";

// A scripted drop over HTTP, as the official SDK meets it: the SDK retries a connection that
// died before an answer (x-stainless-retry-count: N, the same body). docs/http.md, "Failures
// over HTTP", says what the retry gets.
const script = `
steps:
  lone:
    - reply: "never seen"
      break: { after_chunks: 0, then: drop }
  recovers:
    - reply: "never seen"
      break: { after_chunks: 0, then: drop }
    - reply: "recovered"
  then-busy:
    - reply: "never seen"
      break: { after_chunks: 0, then: drop }
    - error: { code: UNAVAILABLE, message: "busy" }
  missed:
    - match: { contains: first }
      reply: "never seen"
      break: { after_chunks: 0, then: drop }
    - match: { contains: second }
      reply: "for another request"
`;

const ask = (text: string): OpenAI.ChatCompletionCreateParamsNonStreaming => ({ model: "m", messages: [{ role: "user", content: text }] });

describe("a scripted drop over HTTP, retried by the official SDK", () => {
  let h: HttpStub;
  beforeAll(async () => {
    h = await startHttpStub(script);
  });
  afterAll(() => h.close());

  it("ends in the SDK's connection error when no entry answers the retries: each retry is dropped too, not answered 404", async () => {
    const err = await h
      .client({ session: "lone", step: "lone", maxRetries: 2 })
      .chat.completions.create(ask("first"))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    const calls = h.stub.episode("lone").calls;
    expect(calls.map((c) => [c.outcome, c.streamBreak, c.status?.code ?? Code.OK])).toEqual([
      [Outcome.STREAM_BROKEN, StreamBreak.DROP, Code.OK],
      [Outcome.STREAM_BROKEN, StreamBreak.DROP, Code.UNAVAILABLE],
      [Outcome.STREAM_BROKEN, StreamBreak.DROP, Code.UNAVAILABLE],
    ]);
    // The recorded status says why, and what the script would have answered (its list is spent).
    expect(calls[1]!.status?.message).toMatch(/^dropped: a client's retry of a request the script dropped, and no entry answers it \(steps\.lone ran out/);
  });

  it("drops a streamed request's retries the same way", async () => {
    const client = h.client({ session: "lone-stream", step: "lone", maxRetries: 1 });
    const err = await client.chat.completions
      .create({ ...ask("first"), stream: true })
      .then(async (s) => {
        for await (const _ of s);
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(h.stub.episode("lone-stream").calls.map((c) => c.outcome)).toEqual([Outcome.STREAM_BROKEN, Outcome.STREAM_BROKEN]);
  });

  it("lets the SDK's retry recover when the script answers it: drop, then the answer", async () => {
    const done = await h.client({ session: "recovers", step: "recovers", maxRetries: 2 }).chat.completions.create(ask("first"));
    expect(done.choices[0]!.message.content).toBe("recovered");
    expect(h.stub.episode("recovers").calls.map((c) => c.outcome)).toEqual([Outcome.STREAM_BROKEN, Outcome.OK]);
  });

  it("drops a retry that matches no entry, and still answers a new request that one matches", async () => {
    const client = h.client({ session: "missed", step: "missed", maxRetries: 1 });
    expect(await client.chat.completions.create(ask("first")).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.APIConnectionError);
    const calls = h.stub.episode("missed").calls;
    expect(calls[1]!.status?.message).toContain("no entry of steps.missed matches the request");
    expect((await client.chat.completions.create(ask("second"))).choices[0]!.message.content).toBe("for another request");
  });

  it("answers a request that is not a retry as before: a spent list is a 400 the SDK does not retry", async () => {
    const client = h.client({ session: "fresh", step: "lone", maxRetries: 0 });
    expect(await client.chat.completions.create(ask("first")).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.APIConnectionError);
    const again = await h
      .client({ session: "fresh", step: "lone", maxRetries: 2 })
      .chat.completions.create(ask("first"))
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OpenAI.BadRequestError);
    expect(h.stub.episode("fresh").calls.map((c) => c.status?.code ?? Code.OK)).toEqual([Code.OK, Code.FAILED_PRECONDITION]);
  });

  it("forgets a drop once the session sends a new request: a later retry of the same body after a 503 is answered, not dropped", async () => {
    expect(
      await h
        .client({ session: "then-busy", step: "then-busy", maxRetries: 0 })
        .chat.completions.create(ask("first"))
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.APIConnectionError);
    // The same body again, as a new request: a 503, which the SDK retries; the retry finds the list spent.
    const err = await h
      .client({ session: "then-busy", step: "then-busy", maxRetries: 1 })
      .chat.completions.create(ask("first"))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(h.stub.episode("then-busy").calls.map((c) => c.status?.code ?? Code.OK)).toEqual([Code.OK, Code.UNAVAILABLE, Code.FAILED_PRECONDITION]);
  });
});
