import { create, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema, MessageSchema, Role, ToolCallSchema, ToolSchema } from "../../gen/modelstub/v1/model_pb.js";
import { Code } from "../../src/index.js";
import { nodeSetsStreamResetLimit } from "../../src/grpc/start-grpc-server.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * Issue 12, finding 3: "a 4 MiB request of 2 million empty messages takes 4.7 s per call (3.85 s
 * decoding) and stalls others 1.7-4.6 s; 32 at once reach 2.6 GB and 73 s a call". Requests past
 * the request limits are now refused from their wire bytes, before protobuf-es decodes them.
 */

/** 2,000,000 empty messages: field 2, length 0, two bytes each (4,000,000 bytes, under 4 MiB). */
const twoMillionEmptyMessages = Buffer.alloc(4_000_000, Buffer.from([0x12, 0x00]));

const pass = (b: Buffer) => b;

/** One unary or server-streaming call with raw request bytes; resolves with its status. */
function rawCall(
  client: Client,
  method: "Generate" | "GenerateStream",
  bytes: Buffer,
  session = "default",
): Promise<{ code: number; details: string; ms: number }> {
  const started = performance.now();
  const metadata = new Metadata();
  metadata.set("x-modelstub-session", session);
  const path = `/modelstub.v1.ModelService/${method}`;
  return new Promise((resolve) => {
    const done = (err: ServiceError | null) => resolve({ code: err?.code ?? Code.OK, details: err?.details ?? "", ms: performance.now() - started });
    if (method === "Generate") {
      client.makeUnaryRequest(path, pass, pass, bytes, metadata, {}, (err) => done(err));
    } else {
      const call = client.makeServerStreamRequest(path, pass, pass, bytes, metadata, {});
      call.on("data", () => {});
      call.on("error", (err: ServiceError) => done(err));
      call.on("end", () => done(null));
    }
  });
}

const encode = (init: Parameters<typeof create<typeof GenerateRequestSchema>>[1]) =>
  Buffer.from(toBinary(GenerateRequestSchema, create(GenerateRequestSchema, init)));
const empty = (n: number) => Array.from({ length: n }, () => create(MessageSchema, { role: Role.USER, content: "" }));

describe("a request past the request limits", () => {
  let s: StubServer;
  let client: Client;
  beforeAll(async () => {
    s = await startStubServer("entries:\n  - repeat: true\n    reply: fine\n", { clock: "virtual" });
    client = new Client(s.address, credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    await s.close();
  });

  it.each(["Generate", "GenerateStream"] as const)(
    "answers %s with 2,000,000 empty messages RESOURCE_EXHAUSTED at once, naming the field, the count and the limit",
    async (method) => {
      const r = await rawCall(client, method, twoMillionEmptyMessages);
      expect(r).toMatchObject({
        code: Code.RESOURCE_EXHAUSTED,
        details: expect.stringContaining("messages holds 2000000 messages; modelstub reads at most 10000 in a request"),
      });
      // Was 4.7 s a call; the scan stops counting structure at the limit. Its time is reported
      // (here and by the isolation check, test/fuzz/bystander.test.ts), not bounded in a test.
      console.log(`${method} of 2,000,000 empty messages refused in ${Math.round(r.ms)} ms`);
    },
  );

  it("keeps serving others while 8 such requests arrive, and records none of them", async () => {
    const hostile = Array.from({ length: 8 }, () => rawCall(client, "Generate", twoMillionEmptyMessages, "hostile"));
    // Calls from another session every 100 ms while the hostile ones arrive: before, one of them
    // waited about 20 s behind the decoding.
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = performance.now();
      expect((await s.port.generate(userRequest("hello"), { session: "bystander" })).message?.content).toBe("fine");
      waits.push(performance.now() - started);
    }
    const results = await Promise.all(hostile);
    expect(results.map((r) => r.code)).toEqual(Array(8).fill(Code.RESOURCE_EXHAUSTED));
    // Every bystander call was answered (above); how long it waited is reported, not bounded.
    console.log(`a bystander beside 8 hostile requests: slowest call ${Math.round(Math.max(...waits))} ms`);
    expect(s.stub.episodes().find((e) => e.session === "hostile")?.calls.length ?? 0).toBe(0);
  });

  it.each([
    ["10,001 messages", () => encode({ messages: empty(10_001) }), "messages holds 10001 messages; modelstub reads at most 10000 in a request"],
    [
      "1,001 tools",
      () => encode({ messages: empty(1), tools: Array.from({ length: 1001 }, () => create(ToolSchema, { name: "t" })) }),
      "tools holds 1001 tools; modelstub reads at most 1000 in a request",
    ],
    [
      "1,001 tool calls in one message",
      () =>
        encode({
          messages: [
            ...empty(3),
            create(MessageSchema, { role: Role.ASSISTANT, toolCalls: Array.from({ length: 1001 }, () => create(ToolCallSchema, { name: "t" })) }),
          ],
        }),
      "messages[3].tool_calls holds 1001 tool calls; modelstub reads at most 1000 in a message",
    ],
    [
      "10,001 tool calls over 11 messages",
      () =>
        encode({
          messages: Array.from({ length: 11 }, () =>
            create(MessageSchema, { role: Role.ASSISTANT, toolCalls: Array.from({ length: 910 }, () => create(ToolCallSchema, { name: "t" })) }),
          ),
        }),
      "the request holds more than 10000 tool calls in all its messages",
    ],
    [
      "1,001 stop sequences",
      () => encode({ messages: empty(1), sampling: { stop: Array.from({ length: 1001 }, () => "x") } }),
      "sampling.stop holds 1001 stop sequences; modelstub reads at most 1000 in a request",
    ],
    // Unknown fields (number 99, an empty varint each) cost a decode too.
    [
      "100,001 unknown fields",
      () => Buffer.concat([encode({ messages: empty(1) }), Buffer.alloc(300_003, Buffer.from([0x98, 0x06, 0x00]))]),
      "the request holds more than 100000 fields in all (unknown ones included)",
    ],
  ])("refuses %s with RESOURCE_EXHAUSTED", async (_what, bytes, message) => {
    const r = await rawCall(client, "Generate", bytes());
    expect(r).toMatchObject({ code: Code.RESOURCE_EXHAUSTED, details: expect.stringContaining(message) });
  });

  it("serves a request at every limit", async () => {
    const bytes = encode({
      messages: [
        ...empty(9_989),
        ...Array.from({ length: 10 }, () =>
          create(MessageSchema, { role: Role.ASSISTANT, toolCalls: Array.from({ length: 1000 }, () => create(ToolCallSchema, { name: "t" })) }),
        ),
        create(MessageSchema, { role: Role.USER, content: "hi" }),
      ],
      tools: Array.from({ length: 1000 }, () => create(ToolSchema, { name: "t" })),
      sampling: { stop: Array.from({ length: 1000 }, () => "x") },
    });
    expect(await rawCall(client, "Generate", bytes)).toMatchObject({ code: Code.OK });
  });
});

/*
 * Issue 12, finding 10: "10k cancels plus 10k deadline cut-offs on one channel ended 1,007 calls
 * INTERNAL ('Received RST_STREAM with code 2')": nghttp2's rapid-reset guard dropped the
 * connection after its 1,000-reset burst. The server raises the limit where Node can
 * (streamResetLimit); on Node 20 the limit remains, and what a client sees is pinned below.
 */
describe("a burst of stream resets on one channel", () => {
  let s: StubServer;
  let client: Client;
  const hang = encode({ messages: [create(MessageSchema, { role: Role.USER, content: "hang" })] });
  const hello = encode({ messages: [create(MessageSchema, { role: Role.USER, content: "hello" })] });
  const path = "/modelstub.v1.ModelService/Generate";

  beforeAll(async () => {
    s = await startStubServer("entries:\n  - repeat: true\n    match: {contains: hang}\n    hang: true\n  - repeat: true\n    reply: fine\n", {
      clock: "real",
    });
    client = new Client(s.address, credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    await s.close();
  });

  /** 3,000 calls cancelled by the client 20 ms in, and 3,000 cut off by a 100 ms deadline: 6,000 resets. */
  async function burst(): Promise<Map<number, string[]>> {
    const ended = new Map<number, string[]>();
    const note = (err: ServiceError | null) => {
      const code = err?.code ?? Code.OK;
      ended.set(code, [...(ended.get(code) ?? []), err?.details ?? ""]);
    };
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 3000; i++) {
      calls.push(
        new Promise((resolve) => {
          const call = client.makeUnaryRequest(path, pass, pass, hang, new Metadata(), {}, (err) => resolve(note(err)));
          setTimeout(() => call.cancel(), 20);
        }),
      );
      calls.push(
        new Promise((resolve) => client.makeUnaryRequest(path, pass, pass, hang, new Metadata(), { deadline: Date.now() + 100 }, (err) => resolve(note(err)))),
      );
      if (i % 250 === 249) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(calls);
    return ended;
  }

  /** waitForReady: if the burst cost the connection, the call waits for the channel's next one instead of failing on the old. */
  const normalCall = () =>
    new Promise<ServiceError | null>((resolve) =>
      client.makeUnaryRequest(path, pass, pass, hello, new Metadata({ waitForReady: true }), { deadline: Date.now() + 10_000 }, (err) => resolve(err)),
    );

  it.runIf(nodeSetsStreamResetLimit())(
    "ends every call CANCELLED or DEADLINE_EXCEEDED, none INTERNAL, and the channel goes on serving",
    async () => {
      const ended = await burst();
      expect([...ended.keys()].sort((a, b) => a - b)).toEqual([Code.CANCELLED, Code.DEADLINE_EXCEEDED]);
      expect(ended.get(Code.CANCELLED)!.length + ended.get(Code.DEADLINE_EXCEEDED)!.length).toBe(6000);
      expect(await normalCall()).toBeNull();
    },
    testTimeoutMs(60_000),
  );

  /*
   * Whether nghttp2's bucket runs dry depends on how fast the burst arrives (it refills 33 a
   * second), so on a loaded machine it may not: what holds either way is that no call ends in
   * any other way, that a dropped connection says so, and that the channel serves afterwards.
   */
  it.skipIf(nodeSetsStreamResetLimit())(
    "on Node 20 (no option for it) ends every call CANCELLED, DEADLINE_EXCEEDED or, past nghttp2's 1,000 resets, INTERNAL for a dropped connection; a call retried once after it is served",
    async () => {
      const ended = await burst();
      for (const code of ended.keys()) expect([Code.CANCELLED, Code.DEADLINE_EXCEEDED, Code.INTERNAL]).toContain(code);
      expect([...ended.values()].reduce((n, list) => n + list.length, 0)).toBe(6000);
      for (const details of ended.get(Code.INTERNAL) ?? []) expect(details).toContain("Received RST_STREAM with code 2");
      // nghttp2 may drop the connection after the burst's last call has ended, under the next
      // call: that call ends the same documented way, and one retry (the advice of docs/operations.md) is
      // served on the channel's new connection.
      let err = await normalCall();
      if (err) expect(err).toMatchObject({ code: Code.INTERNAL, details: expect.stringContaining("Received RST_STREAM with code 2") });
      if (err) err = await normalCall();
      expect(err).toBeNull();
    },
    testTimeoutMs(60_000),
  );
});
