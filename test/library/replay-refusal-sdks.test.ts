import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ModelCallError, Role, startServer, type StubServer } from "../../src/index.js";

// Issue 29: a replay refuses a request the recording did not make, and the official SDKs, left
// on their defaults (two retries of what they deem transient), take the refusal as final. The
// refusal is HTTP 400 for that reason: a 409 or a 5xx would be sent three times, and the
// episode would hold three refused calls for one mistake.
const script = `
replay: { mode: strict }
entries:
  - reply: "Notes: ship it on Friday"
    request:
      last_user: Summarize notes.md
`;

const expected = 'expected last user "Summarize notes.md", got "Summarize todo.md"';

describe("a strict replay asked what the recording never saw, by the official SDKs on their defaults", () => {
  let server: StubServer;
  beforeAll(async () => {
    server = await startServer({ script, http: "127.0.0.1:0", clock: "virtual" });
  });
  afterAll(() => server.close());

  const openai = (session: string) => new OpenAI({ baseURL: server.httpUrl, apiKey: "unused", defaultHeaders: { "x-modelstub-session": session } });
  const anthropic = (session: string) =>
    new Anthropic({ baseURL: server.httpUrl!.replace(/\/v1$/, ""), apiKey: "unused", defaultHeaders: { "x-modelstub-session": session } });

  /** The session's calls, as the episode recorded them: each one's status code. */
  const codes = (session: string) => server.control.episode(session).calls.map((c) => c.status?.code ?? Code.OK);

  it("openai chat completions: a 400 naming the difference, sent once, not retried", async () => {
    const err = await openai("chat")
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "Summarize todo.md" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(expected);
    expect(codes("chat")).toEqual([Code.FAILED_PRECONDITION]);
  });

  it("openai Responses, streamed: the same refusal before any event, sent once", async () => {
    const err = await openai("responses")
      .responses.create({ model: "m", input: "Summarize todo.md", stream: true })
      .then(async (events) => {
        for await (const _ of events);
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain(expected);
    expect(codes("responses")).toEqual([Code.FAILED_PRECONDITION]);
  });

  it("anthropic messages: a 400 in Anthropic's shape, sent once, not retried", async () => {
    const err = await anthropic("messages")
      .messages.create({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "Summarize todo.md" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain(expected);
    expect(codes("messages")).toEqual([Code.FAILED_PRECONDITION]);
  });

  it("gRPC: FAILED_PRECONDITION with the same words; and the entry still answers the recorded request", async () => {
    const port = server.client();
    const err = await port.generate({ messages: [{ role: Role.USER, content: "Summarize todo.md" }] }, { session: "grpc" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as ModelCallError).code).toBe(Code.FAILED_PRECONDITION);
    expect((err as ModelCallError).details).toContain(expected);
    const answer = await port.generate({ messages: [{ role: Role.USER, content: "Summarize notes.md" }] }, { session: "grpc" });
    expect(answer.message?.content).toBe("Notes: ship it on Friday");
    expect(codes("grpc")).toEqual([Code.FAILED_PRECONDITION, Code.OK]);
  });
});
