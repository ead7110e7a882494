import { create, fromBinary, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GenerateRequestSchema, GenerateStreamRequestSchema, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { decodeGenerateRequest, decodeGenerateStreamRequest, readGenerateRequest, readGenerateStreamRequest } from "../../src/wire/decode-generate-request.js";

// The hand-written request decoder (issue 21) must give what fromBinary gives, for every input:
// the same objects (keys in the same order), the same bytes when encoded again, the same error.

const kinds = [
  {
    schema: GenerateRequestSchema as DescMessage,
    decode: decodeGenerateRequest as (b: Buffer) => unknown,
    fast: readGenerateRequest as (b: Buffer) => unknown,
  },
  { schema: GenerateStreamRequestSchema as DescMessage, decode: decodeGenerateStreamRequest, fast: readGenerateStreamRequest },
];

/** mulberry32: a seeded generator, so that a failure names a case that can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Keys and values in order, at every level: toStrictEqual ignores key order, the episode's JSON does not. */
function shape(v: unknown): unknown {
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (Array.isArray(v)) return v.map(shape);
  if (v && typeof v === "object") return Object.entries(v).map(([k, x]) => [k, shape(x)]);
  return v;
}

function outcome(f: () => unknown): { value?: unknown; error?: string } {
  try {
    return { value: f() };
  } catch (e) {
    return { error: `${(e as Error).constructor.name}: ${(e as Error).message}` };
  }
}

/** Asserts the decoder's answer is fromBinary's for `bytes`; returns whether the fast path read them. */
function same(bytes: Uint8Array, label = ""): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fastRead = true;
  for (const k of kinds) {
    const want = outcome(() => fromBinary(k.schema, buf));
    const got = outcome(() => k.decode(buf));
    expect(got.error, label).toBe(want.error);
    if (want.error === undefined) {
      expect(got.value, label).toStrictEqual(want.value);
      expect(shape(got.value), label).toEqual(shape(want.value));
      expect(Buffer.from(toBinary(k.schema, got.value as never)).equals(Buffer.from(toBinary(k.schema, want.value as never))), label).toBe(true);
    }
    if (k.fast(buf) === undefined) fastRead = false;
  }
  return fastRead;
}

const pieces = ["", "a", "Hello", " ", "é", "日本語", "🙂", "𝄞x", "\u0000", "\uFEFF", "line\nbreak", '{"k":[1,2]}', "x".repeat(127), "y".repeat(300)];

function randomText(r: () => number): string {
  let s = "";
  for (let n = Math.floor(r() * 4); n > 0; n--) s += pieces[Math.floor(r() * pieces.length)];
  return s;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const list = <T>(r: () => number, max: number, make: () => T): T[] => Array.from({ length: Math.floor(r() * (max + 1)) }, make);
const roles = [0, 1, 2, 3, 4, 5, 99, -1, -2147483648, 2147483647];
const doubles = [0, -0, NaN, Infinity, -Infinity, 0.7, 1, 2, 1e-300, 5e-324, -123.456, Number.MAX_VALUE];
const uint32s = [0, 1, 127, 128, 16383, 16384, 2 ** 31, 2 ** 32 - 1];
const seeds = [0n, 1n, -1n, 42n, 2n ** 31n, -(2n ** 31n), 2n ** 63n - 1n, -(2n ** 63n)];

function randomRequest(r: () => number): GenerateRequest {
  const maybe = <T>(make: () => T): T | undefined => (r() < 0.5 ? make() : undefined);
  const num = (xs: readonly number[]) => (r() < 0.7 ? pick(r, xs) : (r() - 0.5) * 10 ** Math.floor(r() * 20));
  const sampling =
    r() < 0.6
      ? {
          temperature: maybe(() => num(doubles)),
          topP: maybe(() => num(doubles)),
          maxTokens: maybe(() => (r() < 0.7 ? pick(r, uint32s) : Math.floor(r() * 2 ** 32))),
          stop: list(r, 4, () => randomText(r)),
          seed: maybe(() => (r() < 0.6 ? pick(r, seeds) : BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 53)) * BigInt(Math.floor(r() * 2 ** 20) - 2 ** 19)))),
        }
      : undefined;
  return create(GenerateRequestSchema, {
    model: randomText(r),
    messages: list(r, 6, () => ({
      role: pick(r, roles),
      content: randomText(r),
      toolCalls: list(r, 3, () => ({ id: randomText(r), name: randomText(r), arguments: randomText(r) })),
      toolCallId: randomText(r),
      name: randomText(r),
    })),
    tools: list(r, 3, () => ({ name: randomText(r), description: randomText(r), parametersJson: randomText(r) })),
    sampling,
    stepId: randomText(r),
  });
}

// Raw wire bytes for the inputs toBinary never writes.
type Part = number | string | Uint8Array | Part[];
function bytes(...parts: Part[]): Uint8Array {
  const out: number[] = [];
  const put = (p: Part): void => {
    if (typeof p === "number") out.push(p);
    else if (typeof p === "string") out.push(...Buffer.from(p, "utf8"));
    else if (p instanceof Uint8Array) out.push(...p);
    else p.forEach(put);
  };
  parts.forEach(put);
  return Uint8Array.from(out);
}
/** A length-delimited field: tag, one-byte length, body. */
const field = (tag: number, ...body: Part[]): Uint8Array => {
  const b = bytes(...body);
  return bytes(tag, b.length, b);
};
const message = (...body: Part[]) => field(0x12, ...body);
const sampling = (...body: Part[]) => field(0x22, ...body);
const double = (v: number): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v, true);
  return b;
};
const negativeTen = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]; // -1 as ten bytes

describe("the hand-written GenerateRequest decoder", () => {
  it("decodes thousands of random requests as fromBinary does, on its fast path", () => {
    const seed = Number(process.env.MODELSTUB_DECODER_SEED ?? 21);
    const r = prng(seed);
    for (let i = 0; i < 3000; i++) {
      const request = randomRequest(r);
      const wire = toBinary(GenerateRequestSchema, request);
      expect(same(wire, `seed ${seed} case ${i}`), `seed ${seed} case ${i} fell back`).toBe(true);
      expect(readGenerateRequest(Buffer.from(wire))).toStrictEqual(request);
    }
  });

  it("reads the shapes toBinary writes that are edge cases on the fast path", () => {
    const fast = [
      bytes(), // all defaults
      field(0x0a, "a"), // model, then model again: the last one wins
      bytes(field(0x0a, "first"), field(0x0a, "second"), field(0x2a, "s"), field(0x2a, "")),
      message(0x08, 3, 0x08, 1), // role twice
      message(0x08, negativeTen), // a negative role, ten bytes
      message(0x08, 0x80, 0x80, 0x80, 0x80, 0x10), // a role past 32 bits: the low 32 kept, as varint32read does
      sampling(0x09, double(1), 0x09, double(NaN), 0x18, 5, 0x18, 0, 0x28, 7, 0x28, negativeTen), // optionals twice
      sampling(0x11, double(-0), 0x22, 0, 0x22, 1, "x"), // top_p before stop; an empty stop string
      bytes(0x0a, 0x85, 0x00, "hello"), // an overlong length: BinaryReader reads it
      field(0x0a, "\uFEFFbom"), // a leading U+FEFF is text
      message(), // an empty message
      bytes(message(field(0x1a)), field(0x1a)), // an empty tool call and an empty tool
    ];
    for (const [i, b] of fast.entries()) expect(same(b, `fast ${i}`), `fast ${i} fell back`).toBe(true);
  });

  it("falls back to fromBinary for unknown fields of every wire type, on every message", () => {
    const unknowns = [
      [0x30, 0x01], // field 6 varint
      [0x31, ...double(1)], // field 6 fixed64
      [0x32, 0x01, 0x41], // field 6 length-delimited
      [0x33, 0x08, 0x01, 0x34], // field 6 group
      [0x35, 1, 2, 3, 4], // field 6 fixed32
      [0x80, 0x01, 0x00], // field 16 varint: a two-byte tag
      [0x78, 0x00], // field 15 varint
    ];
    for (const [i, u] of unknowns.entries()) {
      const inputs = [
        bytes(u),
        bytes(field(0x0a, "m"), u, field(0x2a, "s")),
        message(0x08, 2, u),
        message(field(0x1a, field(0x0a, "id"), u)),
        field(0x1a, field(0x0a, "tool"), u),
        sampling(0x18, 3, u),
      ];
      for (const [j, b] of inputs.entries()) expect(same(b, `unknown ${i} at ${j}`), `unknown ${i} at ${j}`).toBe(false);
    }
  });

  it("falls back for a sampling twice (merged), wrong wire types, overlong tags and nested overruns", () => {
    const inputs = [
      bytes(sampling(0x09, double(0.5), 0x22, 1, "a"), sampling(0x18, 9, 0x22, 1, "b")), // merged: both stops
      bytes(0x08, 0x01), // model as a varint
      bytes(0x10, 0x01), // messages as a varint
      message(0x0a, 1, 2), // role length-delimited
      message(0x0d, 1, 2, 3, 4), // role as fixed32
      sampling(0x0d, 0, 0, 0x80, 0x3f), // temperature as fixed32
      sampling(0x1a, 1, 5), // max_tokens packed
      sampling(0x2a, 1, 5), // seed packed
      bytes(0x8a, 0x00, 1, "x"), // model with an overlong tag
      bytes(0x12, 0x04, 0x12, 0x05, "abc", 0x0a, 0x00), // a string past its message's end
      bytes(0x12, 0x05, 0x08, 0x01), // a message past the bytes
    ];
    for (const [i, b] of inputs.entries()) expect(same(b, `fallback ${i}`), `fallback ${i}`).toBe(false);
  });

  it("fails as fromBinary fails on invalid UTF-8 and on every truncation", () => {
    const invalid = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf0, 0x90, 0x80], [0x61, 0x80], [0xf4, 0x90, 0x80, 0x80]];
    for (const [i, s] of invalid.entries()) {
      for (const b of [field(0x0a, s), message(field(0x12, s)), sampling(field(0x22, s)), field(0x1a, field(0x0a, s))]) {
        expect(same(b, `utf8 ${i}`)).toBe(false);
        expect(() => decodeGenerateRequest(Buffer.from(b))).toThrow();
      }
    }
    const r = prng(7);
    for (let i = 0; i < 12; i++) {
      const wire = toBinary(GenerateRequestSchema, randomRequest(r));
      for (let cut = 0; cut < wire.length; cut++) same(wire.subarray(0, cut), `truncated ${i} at ${cut}`);
    }
    for (const b of [
      bytes(0x0a),
      bytes(0x0a, 0x80),
      message(0x08),
      message(0x08, 0xff),
      sampling(0x09, 1, 2),
      sampling(0x28, ...negativeTen.slice(0, 9)),
      bytes(0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
    ]) {
      expect(same(b)).toBe(false);
      expect(() => fromBinary(GenerateRequestSchema, b)).toThrow();
    }
  });
});
