import { clone, create, createFileRegistry, fromBinary, toBinary, type DescFile, type DescMessage, type Message } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FieldDescriptorProtoSchema, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EpisodeCallSchema, EpisodeSchema, file_modelstub_v1_episode, type Episode, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import {
  file_modelstub_v1_model,
  GenerateRequestSchema,
  GenerateResponseSchema,
  GenerateStreamRequestSchema,
  GenerateStreamResponseSchema,
  type GenerateResponse,
  type GenerateStreamResponse,
} from "../../gen/modelstub/v1/model_pb.js";
import { encodeEpisode, encodeEpisodeCall } from "../../src/engine/encode-episode.js";
import { readGenerateRequest, readGenerateStreamRequest } from "../../src/wire/decode-generate-request.js";
import { encodeStreamFrame } from "../../src/wire/encode-stream-frame.js";
import { writeEpisodeCall } from "../../src/wire/write-episode-call.js";
import { encodeResponseAlone } from "../../src/wire/write-response.js";
import { schemaCases, type SchemaCase } from "./schema-cases.js";

// The hand-written codec (src/wire/) against protobuf-es, walked from the descriptors: every
// field of every message it encodes or decodes by hand is set, alone and with all the others,
// at every scalar kind's edge values, and the bytes (or the objects) must be protobuf-es's own.
// A field added to a .proto and not taught to the codec fails here: the fixture schemas below,
// each one field longer than the codec knows, show it.

/** What went wrong, per case: the fields that failed when set alone, and how many whole-message cases failed. */
interface Failures {
  fields: string[];
  whole: string[];
}

function hex(bytes: Uint8Array | undefined): string {
  return bytes === undefined ? "(nothing)" : Buffer.from(bytes).toString("hex");
}

/** Runs `check` on every case of `schema`; a case fails by returning a reason, or by throwing. */
function walk(schema: DescMessage, unknown: boolean, check: (c: SchemaCase) => string | undefined): Failures {
  const fields = new Set<string>();
  const whole: string[] = [];
  for (const c of schemaCases(schema, { unknown })) {
    let reason: string | undefined;
    try {
      reason = check(c);
    } catch (err) {
      reason = `threw ${String(err)}`;
    }
    if (reason === undefined) continue;
    if (c.field !== undefined) fields.add(c.field);
    else whole.push(`${c.label}: ${reason}`);
  }
  return { fields: [...fields], whole };
}

/** Encoding: the hand encoder's bytes are toBinary's, for every case (unknown fields included). */
function encodeFailures(schema: DescMessage, encode: (m: Message) => Uint8Array): Failures {
  return walk(schema, true, ({ message }) => {
    const want = toBinary(schema, message);
    const got = encode(message);
    return Buffer.from(got).equals(want) ? undefined : `want ${hex(want)}, got ${hex(got)}`;
  });
}

/** Keys and values in order, at every level: toStrictEqual ignores key order, the episode's JSON does not. */
function shape(v: unknown): unknown {
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (v instanceof Uint8Array) return `bytes ${hex(v)}`;
  if (Array.isArray(v)) return v.map(shape);
  if (v && typeof v === "object") return Object.entries(v).map(([k, x]) => [k, shape(x)]);
  return v;
}

/**
 * Decoding: toBinary's bytes of every case (no unknown fields: those go to fromBinary on purpose)
 * are read by the fast path, not left to fromBinary, into fromBinary's object, keys in its order.
 */
function decodeFailures(schema: DescMessage, decodedAs: DescMessage, read: (b: Buffer) => unknown): Failures {
  return walk(schema, false, ({ message }) => {
    const bytes = Buffer.from(toBinary(schema, message));
    const got = read(bytes);
    if (got === undefined) return "the fast path left it to fromBinary";
    const want = fromBinary(decodedAs, bytes);
    return JSON.stringify(shape(got)) === JSON.stringify(shape(want)) ? undefined : "a different object than fromBinary's";
  });
}

// The codecs, each as a function of a message of its schema.
const episodeCallBytes = (m: Message) => writeEpisodeCall(m as EpisodeCall).bytes;
const responseInCall = (m: Message) => writeEpisodeCall(create(EpisodeCallSchema, { response: m as GenerateResponse })).response!;
const responseAlone = (m: Message) => encodeResponseAlone(m as GenerateResponse);
const streamFrame = (m: Message) => encodeStreamFrame(m as GenerateStreamResponse);
/** An Episode as the engine assembles it: its calls encoded one by one, the plan from its identity. */
function episodeBytes(m: Message): Uint8Array {
  const e = m as Episode;
  const plan = e.faultPlan && { name: e.faultPlan.name, digest: e.faultPlan.digest, seed: e.faultPlan.chaosSeed };
  return encodeEpisode(
    e.session,
    e.calls.map((c) => encodeEpisodeCall(c)),
    plan,
  );
}

const none: Failures = { fields: [], whole: [] };

describe("the hand-written encoders write what toBinary writes, field by field", () => {
  it("EpisodeCall (its request, status, response, usage and fault, and an embeddings call's request and response: every field of each)", () => {
    expect(encodeFailures(EpisodeCallSchema, episodeCallBytes)).toEqual(none);
  });

  it("GenerateResponse, on its own and as the view an episode call keeps for the wire", () => {
    expect(encodeFailures(GenerateResponseSchema, responseAlone)).toEqual(none);
    expect(encodeFailures(GenerateResponseSchema, responseInCall)).toEqual(none);
  });

  it("Episode, assembled from encoded calls and the fault plan's identity", () => {
    // A plan's identity has no unknown fields to keep: the episode is made, never decoded.
    const failures = walk(EpisodeSchema, false, ({ message }) => {
      const want = toBinary(EpisodeSchema, message as Episode);
      return Buffer.from(episodeBytes(message)).equals(want) ? undefined : `want ${hex(want)}, got ${hex(episodeBytes(message))}`;
    });
    expect(failures).toEqual(none);
  });

  it("GenerateStreamResponse, the stream frame: each member of its oneof, the text delta by hand", () => {
    expect(encodeFailures(GenerateStreamResponseSchema, streamFrame)).toEqual(none);
  });
});

describe("the hand-written request decoder reads what fromBinary reads, field by field", () => {
  it("GenerateRequest", () => {
    expect(decodeFailures(GenerateRequestSchema, GenerateRequestSchema, readGenerateRequest)).toEqual(none);
  });

  it("GenerateStreamRequest (the same fields, read by the same code)", () => {
    expect(decodeFailures(GenerateStreamRequestSchema, GenerateStreamRequestSchema, readGenerateStreamRequest)).toEqual(none);
  });
});

/**
 * `message` of `file` with one more field than gen/ has (a string, or a uint32), as if a .proto
 * had gained it and gen/ been regenerated, but not the codec: a schema of its own, built with
 * protobuf-es's registry from the generated file's descriptor.
 */
function withOneMoreField(file: DescFile, message: string, field: { name: string; number: number; type: FieldDescriptorProto_Type }): DescMessage {
  const proto = clone(FileDescriptorProtoSchema, file.proto);
  const m = proto.messageType.find((t) => t.name === message);
  if (m === undefined) throw new Error(`${file.name} declares no message ${message}`);
  m.field.push(create(FieldDescriptorProtoSchema, { ...field, label: FieldDescriptorProto_Label.OPTIONAL }));
  const registry = createFileRegistry(proto, (name) => file.dependencies.find((d) => d.proto.name === name));
  const grown = registry.getMessage(`${proto.package}.${message}`);
  if (grown === undefined) throw new Error(`no ${message} in the grown registry`);
  return grown;
}

describe("a field added to a .proto and not to the codec fails the conformance walk", () => {
  it("an EpisodeCall field the encoder does not write: named, and every whole-message case fails", () => {
    const schema = withOneMoreField(file_modelstub_v1_episode, "EpisodeCall", { name: "added", number: 19, type: FieldDescriptorProto_Type.STRING });
    const failures = encodeFailures(schema, episodeCallBytes);
    expect(failures.fields).toEqual(["added"]);
    expect(failures.whole.length).toBeGreaterThan(0);
  });

  it("a GenerateResponse field", () => {
    const schema = withOneMoreField(file_modelstub_v1_model, "GenerateResponse", { name: "created", number: 6, type: FieldDescriptorProto_Type.UINT32 });
    expect(encodeFailures(schema, responseAlone).fields).toEqual(["created"]);
  });

  it("a regular GenerateStreamResponse field, which a text delta frame would drop", () => {
    const schema = withOneMoreField(file_modelstub_v1_model, "GenerateStreamResponse", { name: "created", number: 3, type: FieldDescriptorProto_Type.UINT32 });
    const failures = encodeFailures(schema, streamFrame);
    // Set alone, it goes through toBinary (no text delta): the frames with every field set fail.
    expect(failures.whole.filter((w) => w.includes("oneof member 0")).length).toBeGreaterThan(0);
  });

  it("a GenerateRequest field the fast decoder does not read", () => {
    const schema = withOneMoreField(file_modelstub_v1_model, "GenerateRequest", { name: "user", number: 6, type: FieldDescriptorProto_Type.STRING });
    const failures = decodeFailures(schema, GenerateRequestSchema, readGenerateRequest);
    expect(failures.fields).toEqual(["user"]);
    expect(failures.whole.length).toBeGreaterThan(0);
  });
});
