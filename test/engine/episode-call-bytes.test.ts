// Longer than 250 lines because it pins the episode call encoder to toBinary twice: field by
// field on chosen calls, and on seeded pseudo-random ones.
import { create, toBinary, type UnknownField } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import {
  AppliedFaultSchema,
  CallMethod,
  CallStatusSchema,
  EpisodeCallSchema,
  FaultKind,
  MetadataEntrySchema,
  Outcome,
  StreamBreak,
  type EpisodeCall,
} from "../../gen/modelstub/v1/episode_pb.js";
import {
  FinishReason,
  GenerateRequestSchema,
  GenerateResponseSchema,
  MessageSchema,
  Role,
  SamplingParamsSchema,
  ToolCallSchema,
  ToolSchema,
  UsageSchema,
  type Message,
} from "../../gen/modelstub/v1/model_pb.js";
import { encodeEpisodeCall, encodeResponse } from "../../src/engine/encode-episode.js";

const response = () =>
  create(GenerateResponseSchema, {
    id: "gen-s-3",
    model: "m",
    message: { role: Role.ASSISTANT, content: "héllo", toolCalls: [{ id: "call-s-3-0", name: "bash", arguments: '{"command":"pwd"}' }] },
    finishReason: FinishReason.TOOL_CALLS,
    usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 },
  });

const calls: EpisodeCall[] = [
  create(EpisodeCallSchema, {}),
  create(EpisodeCallSchema, {
    sequence: 1n,
    session: "default",
    method: CallMethod.GENERATE,
    request: {},
    outcome: Outcome.OK,
    response: create(GenerateResponseSchema, {}),
    usage: {},
  }),
  (() => {
    const r = response();
    return create(EpisodeCallSchema, {
      sequence: 300n,
      session: "sessión-ü",
      method: CallMethod.GENERATE_STREAM,
      stepId: "plan",
      entry: "steps.plan[2]",
      request: { model: "m", messages: [{ role: Role.USER, content: "PROBE-PWD" }], stepId: "plan", sampling: { temperature: 0 } },
      outcome: Outcome.STREAM_BROKEN,
      status: { code: 14, message: "link died", trailers: [{ key: "retry-after-ms", value: "40" }] },
      response: r,
      usage: r.usage,
      chunksSent: 2,
      streamBreak: StreamBreak.DROP,
      startMs: 30_000n,
      endMs: 2n ** 40n,
      fault: { rule: "rules[3]", kind: FaultKind.BREAK },
    });
  })(),
  create(EpisodeCallSchema, { sequence: 7n, session: "s", outcome: Outcome.ERROR, fault: { rule: "chaos", kind: FaultKind.ERROR, roll: 999_999 } }),
  create(EpisodeCallSchema, { sequence: 8n, session: "s", outcome: Outcome.OK, fault: {} }),
  // Field 16, the first with a two-byte tag: ASCII, UTF-8, an empty element, a long one.
  create(EpisodeCallSchema, {
    sequence: 9n,
    session: "s",
    outcome: Outcome.STREAM_BROKEN,
    chunksSent: 4,
    sentTextChunks: ["Alles erledigt: ", "Wetter 18 °C, ", "", "x".repeat(300)],
  }),
];

describe("an episode call's bytes", () => {
  it("are what toBinary writes for the whole call, field by field and for empty and set sub-messages", () => {
    for (const call of calls) expect(Buffer.from(encodeEpisodeCall(call)).equals(Buffer.from(toBinary(EpisodeCallSchema, call)))).toBe(true);
  });

  it("keep the response's bytes for the wire, equal to encoding the response on its own", () => {
    const call = calls[2]!;
    encodeEpisodeCall(call);
    expect(Buffer.from(encodeResponse(call.response!)).equals(Buffer.from(toBinary(GenerateResponseSchema, call.response!)))).toBe(true);
    const fresh = response();
    expect(Buffer.from(encodeResponse(fresh)).equals(Buffer.from(toBinary(GenerateResponseSchema, fresh)))).toBe(true);
  });
});

// Seeded pseudo-random calls covering every field of EpisodeCall and what it nests: the
// hand-written encoder must write what toBinary writes for each, byte for byte.

/** mulberry32: a small PRNG, fixed seed, so a failure replays. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = prng(0x5eed_2101);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const chance = (p: number) => rand() < p;

// ASCII, 2-, 3- and 4-byte UTF-8 (an astral pair), lone high and low surrogates (U+FFFD).
const pieces = ["a", "Z", "7", " ", "{", "\n", "\u0000", "é", "ß", "\u07ff", "€", "中", "\uffff", "😀", "\u{10ffff}", "\ud800", "\udfff"];
const seen = new Set<string>();
function text(): string {
  const r = rand();
  // Lengths past the native-measure threshold (48), past a 2-byte length prefix (128+ bytes),
  // now and then past a 3-byte one (16384+ bytes).
  const len = r < 0.3 ? 0 : r < 0.8 ? int(12) : r < 0.99 ? 40 + int(200) : 12_000 + int(2000);
  let s = "";
  for (let i = 0; i < len; i++) {
    const p = chance(0.7) ? "abcdefghij"[int(10)]! : pick(pieces);
    seen.add(p);
    s += p;
  }
  return s;
}

const uint32s = [0, 1, 127, 128, 16_383, 16_384, 2 ** 21, 2 ** 28, 2 ** 31, 2 ** 32 - 1];
const uint32 = () => (chance(0.5) ? pick(uint32s) : int(2 ** 32));
// Open enums: unknown and negative numbers are written too (a negative one as ten bytes).
const enumValue = (known: number) => (chance(0.8) ? int(known) : pick([-1, -(2 ** 31), 2 ** 31 - 1, 99, 128]));
const uint64s = [0n, 1n, 127n, 128n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 64n - 1n];
const uint64 = () => (chance(0.6) ? pick(uint64s) : BigInt.asUintN(64, BigInt(int(2 ** 32)) * BigInt(int(2 ** 32)) + BigInt(int(2 ** 32))));
const int64s = [0n, -1n, 1n, -(2n ** 63n), 2n ** 63n - 1n, -(2n ** 31n), 2n ** 40n];
const int64 = () => (chance(0.6) ? pick(int64s) : BigInt.asIntN(64, BigInt(int(2 ** 32)) * BigInt(int(2 ** 32)) + BigInt(int(2 ** 32))));
const doubles = [0, -0, NaN, Infinity, -Infinity, 1.5, -2.25, 5e-324, Number.MAX_VALUE, 0.7];
const double = () => (chance(0.6) ? pick(doubles) : (rand() - 0.5) * 10 ** int(20));

/** Unknown fields of each wire type, field numbers up to 2^29 - 1 (five-byte tags). */
function unknown(): UnknownField[] | undefined {
  if (!chance(0.15)) return undefined;
  const fields: UnknownField[] = [];
  for (let i = int(3) + 1; i > 0; i--) {
    const no = pick([15, 16, 100, 2047, 2048, 2 ** 29 - 1, 50 + int(1000)]);
    const wireType = pick([WireType.Varint, WireType.Bit64, WireType.LengthDelimited, WireType.Bit32]);
    const w = new BinaryWriter();
    if (wireType === WireType.Varint) w.uint64(uint64());
    else if (wireType === WireType.Bit64) w.fixed64(uint64());
    else if (wireType === WireType.Bit32) w.fixed32(uint32());
    else w.string(text());
    fields.push({ no, wireType, data: w.finish() });
  }
  return fields;
}

function withUnknown<T extends { $unknown?: UnknownField[] }>(m: T): T {
  const u = unknown();
  if (u) m.$unknown = u;
  return m;
}

const list = <T>(max: number, make: () => T): T[] => Array.from({ length: int(max + 1) }, make);

function message(): Message {
  return withUnknown(
    create(MessageSchema, {
      role: enumValue(5),
      content: text(),
      toolCalls: list(2, () => withUnknown(create(ToolCallSchema, { id: text(), name: text(), arguments: text() }))),
      toolCallId: text(),
      name: text(),
    }),
  );
}

function sampling() {
  const s = create(SamplingParamsSchema, { stop: list(3, text) });
  // Each optional field set (to anything, zero and -0 included) or left unset.
  if (chance(0.5)) s.temperature = double();
  if (chance(0.5)) s.topP = double();
  if (chance(0.5)) s.maxTokens = uint32();
  if (chance(0.5)) s.seed = int64();
  return withUnknown(s);
}

function request() {
  return withUnknown(
    create(GenerateRequestSchema, {
      model: text(),
      messages: list(4, message),
      tools: list(2, () => withUnknown(create(ToolSchema, { name: text(), description: text(), parametersJson: text() }))),
      sampling: chance(0.7) ? sampling() : undefined,
      stepId: text(),
    }),
  );
}

const usage = () => withUnknown(create(UsageSchema, { inputTokens: uint32(), outputTokens: uint32(), totalTokens: uint32() }));

function randomResponse() {
  return withUnknown(
    create(GenerateResponseSchema, {
      id: text(),
      model: text(),
      message: chance(0.8) ? message() : undefined,
      finishReason: enumValue(5),
      usage: chance(0.8) ? usage() : undefined,
    }),
  );
}

function randomCall(): EpisodeCall {
  const trailers = () => list(3, () => withUnknown(create(MetadataEntrySchema, { key: text(), value: text() })));
  return withUnknown(
    create(EpisodeCallSchema, {
      sequence: uint64(),
      session: text(),
      method: enumValue(3),
      stepId: text(),
      entry: text(),
      request: chance(0.9) ? request() : undefined,
      outcome: enumValue(7),
      status: chance(0.4) ? withUnknown(create(CallStatusSchema, { code: uint32(), message: text(), trailers: trailers() })) : undefined,
      response: chance(0.7) ? randomResponse() : undefined,
      usage: chance(0.6) ? usage() : undefined,
      chunksSent: uint32(),
      streamBreak: enumValue(4),
      startMs: uint64(),
      endMs: uint64(),
      fault: chance(0.3) ? withUnknown(create(AppliedFaultSchema, { rule: text(), kind: enumValue(7), roll: uint32() })) : undefined,
      sentTextChunks: chance(0.3) ? Array.from({ length: 1 + int(4) }, text) : [],
    }),
  );
}

describe("the episode call encoder, on seeded pseudo-random calls", () => {
  it("writes what toBinary writes, and keeps the response's bytes as toBinary writes them", () => {
    let checked = 0;
    for (let i = 0; i < 3000; i++) {
      const call = randomCall();
      const expected = toBinary(EpisodeCallSchema, call);
      const actual = encodeEpisodeCall(call);
      if (Buffer.compare(actual, expected) !== 0) expect.fail(`call ${i}: bytes differ from toBinary`);
      if (call.response) {
        const want = toBinary(GenerateResponseSchema, call.response);
        expect(Buffer.compare(encodeResponse(call.response), want)).toBe(0);
        // A response never recorded is encoded on its own, to the same bytes.
        expect(Buffer.compare(encodeResponse({ ...call.response }), want)).toBe(0);
      }
      checked++;
    }
    expect(checked).toBe(3000);
    // The generator reached every kind of character, lone surrogates included.
    expect(pieces.filter((p) => !seen.has(p))).toEqual([]);
  });
});
