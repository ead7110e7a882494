import { create, toBinary } from "@bufbuild/protobuf";
import { type Client, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { GenerateRequestSchema, MessageSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { Code } from "../../src/index.js";
import { heavyRequestBytes } from "../../src/shared/heavy-turns.js";
import { collect, userRequest } from "../support/requests.js";
import { rawBytes, startStubServer, type StubServer } from "../support/start-stub-server.js";

/*
 * A request of MBs is decoded on its call's turn of the event loop, not in grpc-js's message
 * pipeline (issue 27: 64 such requests arriving together were decoded back to back, 45-61 ms of
 * the loop). What a caller sees is the same as for a small request: the answer, the episode, and
 * for bytes that do not decode, grpc-js's own INTERNAL "Error deserializing request".
 */

const script = `
entries: [{ reply: "{{last_user}}", repeat: true }]
`;

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Sends `bytes` as they are to Generate; the status it ends with. */
function sendRaw(c: Client, bytes: Buffer): Promise<ServiceError | undefined> {
  const md = new Metadata();
  md.set("x-modelstub-session", "raw");
  return new Promise((resolve) =>
    c.makeUnaryRequest("/modelstub.v1.ModelService/Generate", rawBytes, rawBytes, bytes, md, (err: ServiceError | null) => resolve(err ?? undefined)),
  );
}

/** A Generate request whose one message's text is `chars` of "x" with byte `at` of the encoding set to 0xff (invalid UTF-8). */
function undecodable(chars: number): Buffer {
  const bytes = Buffer.from(
    toBinary(GenerateRequestSchema, create(GenerateRequestSchema, { messages: [create(MessageSchema, { role: Role.USER, content: "x".repeat(chars) })] })),
  );
  bytes[bytes.length - 1] = 0xff;
  return bytes;
}

describe("a request of MBs over gRPC", () => {
  it("is answered and recorded as a small one is, unary and streamed", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const text = "word ".repeat(Math.ceil(heavyRequestBytes / 5) + 100);
    const unary = await server.port.generate(userRequest(text), { session: "big" });
    expect(unary.message?.content).toBe(text);
    const { frames, error } = await collect(server.port.generateStream(userRequest(text), { session: "big" }));
    expect(error).toBeUndefined();
    expect(frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : "")).join("")).toBe(text);
    const calls = server.stub.episode("big").calls;
    expect(calls.map((c) => c.request?.messages[0]?.content.length)).toEqual([text.length, text.length]);
  });

  it("that does not decode ends INTERNAL as grpc-js ends a small one, and is in no episode", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    const small = await sendRaw(server.rawClient(), undecodable(100));
    const large = await sendRaw(server.rawClient(), undecodable(heavyRequestBytes + 100));
    expect(small).toMatchObject({ code: Code.INTERNAL, details: "Error deserializing request" });
    expect(large).toMatchObject({ code: small!.code, details: small!.details });
    expect(server.stub.sessions().find((s) => s.name === "raw")?.calls ?? 0).toBe(0);
  });
});
