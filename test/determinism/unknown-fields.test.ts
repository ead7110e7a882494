import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Client, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { MessageSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { rawBytes, startStubServer, type StubServer } from "../support/start-stub-server.js";

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Fields no version of model.proto has: a varint, a text and a fixed64, as a newer client might send. */
function unknownFields(first: number): Uint8Array {
  const w = new BinaryWriter();
  w.tag(first, WireType.Varint).uint64(7n);
  w.tag(first + 1, WireType.LengthDelimited).string("from a newer client");
  w.tag(first + 2, WireType.Bit64).fixed64(0x0102030405060708n);
  return w.finish();
}

const concat = (...parts: Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));

/**
 * A GenerateRequest (or GenerateStreamRequest: same fields, same numbers) as wire bytes, in the
 * canonical order protobuf writes: known fields by number, then the unknown ones. Its user
 * message carries unknown fields of its own.
 */
function requestBytes(): Buffer {
  const message = concat(toBinary(MessageSchema, create(MessageSchema, { role: Role.USER, content: "hello" })), unknownFields(50));
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).string("test-model");
  w.tag(2, WireType.LengthDelimited).bytes(message);
  return concat(w.finish(), unknownFields(100));
}

/** The payloads of every length-delimited field `field` in `bytes`, in order. */
function fieldsOf(bytes: Uint8Array, field: number): Uint8Array[] {
  const r = new BinaryReader(bytes);
  const out: Uint8Array[] = [];
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (no === field && type === WireType.LengthDelimited) out.push(r.bytes());
    else r.skip(type, no);
  }
  return out;
}

/** The `request` bytes of every call recorded in an episode. */
function recordedRequests(episode: Uint8Array): Buffer[] {
  return fieldsOf(episode, 2).map((call) => Buffer.from(fieldsOf(call, 6)[0] ?? new Uint8Array()));
}

/** Sends `bytes` as they are to a ModelService method, unary or streaming; resolves when the call ends. */
function send(c: Client, method: "Generate" | "GenerateStream", bytes: Buffer, session: string): Promise<void> {
  const md = new Metadata();
  md.set("x-modelstub-session", session);
  const path = `/modelstub.v1.ModelService/${method}`;
  // No deadline: the test's timeout bounds a call that never ends, whatever the machine's load.
  const deadline = Infinity;
  return new Promise((resolve, reject) => {
    if (method === "Generate") {
      c.makeUnaryRequest(path, rawBytes, rawBytes, bytes, md, { deadline }, (err: ServiceError | null) => (err ? reject(err) : resolve()));
      return;
    }
    const stream = c.makeServerStreamRequest(path, rawBytes, rawBytes, bytes, md, { deadline });
    stream.on("data", () => {});
    stream.on("error", reject);
    stream.on("end", () => resolve());
  });
}

describe("unknown request fields", () => {
  for (const method of ["Generate", "GenerateStream"] as const) {
    it(`are recorded as sent, byte for byte, in a ${method} call's request`, async () => {
      server = await startStubServer("entries: [{ reply: ok, repeat: true }]", { clock: "virtual" });
      const sent = requestBytes();
      await send(server.rawClient(), method, sent, "unknown-fields");
      const { bytes } = await server.control.exportEpisode("unknown-fields");
      const [recorded] = recordedRequests(bytes);
      // Hex, so a difference shows where it is.
      expect(recorded?.toString("hex")).toBe(sent.toString("hex"));
    });
  }

  it("sent before the known fields are recorded after them, in the order sent", async () => {
    server = await startStubServer("entries: [{ reply: ok, repeat: true }]", { clock: "virtual" });
    const known = new BinaryWriter().tag(1, WireType.LengthDelimited).string("test-model").finish();
    await send(server.rawClient(), "Generate", concat(unknownFields(100), known), "reordered");
    const [recorded] = recordedRequests((await server.control.exportEpisode("reordered")).bytes);
    expect(recorded?.toString("hex")).toBe(concat(known, unknownFields(100)).toString("hex"));
  });

  it("change nothing else the call records (ids, usage, timeline)", async () => {
    server = await startStubServer("entries: [{ reply: ok, repeat: true }]", { clock: "virtual" });
    const plain = concat(
      new BinaryWriter().tag(1, WireType.LengthDelimited).string("test-model").finish(),
      new BinaryWriter()
        .tag(2, WireType.LengthDelimited)
        .bytes(toBinary(MessageSchema, create(MessageSchema, { role: Role.USER, content: "hello" })))
        .finish(),
    );
    // Session names of one length, so the two calls' bytes differ in the name and nowhere else.
    await send(server.rawClient(), "Generate", requestBytes(), "extra");
    await send(server.rawClient(), "Generate", plain, "plain");
    const withUnknown = await server.control.exportEpisode("extra");
    const without = await server.control.exportEpisode("plain");
    const strip = (episode: Uint8Array, session: string) => {
      const call = fieldsOf(episode, 2)[0]!;
      const r = new BinaryReader(call);
      const kept: string[] = [];
      while (r.pos < r.len) {
        const start = r.pos;
        const [no, type] = r.tag();
        r.skip(type, no);
        if (no !== 6) kept.push(Buffer.from(call.subarray(start, r.pos)).toString("hex").split(Buffer.from(session).toString("hex")).join("<session>"));
      }
      return kept;
    };
    expect(strip(withUnknown.bytes, "extra")).toEqual(strip(without.bytes, "plain"));
  });
});
