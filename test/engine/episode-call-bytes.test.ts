import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CallMethod, EpisodeCallSchema, Outcome, StreamBreak, type EpisodeCall } from "../../gen/modelstub/v1/episode_pb.js";
import { FinishReason, GenerateResponseSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
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
  create(EpisodeCallSchema, { sequence: 1n, session: "default", method: CallMethod.GENERATE, request: {}, outcome: Outcome.OK, response: create(GenerateResponseSchema, {}), usage: {} }),
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
    });
  })(),
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
