import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FinishReason, GenerateStreamResponseSchema, type GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import { encodeStreamFrame, sendStreamFrame } from "../../src/wire/encode-stream-frame.js";

const textFrame = (id: string, model: string, text: string): GenerateStreamResponse =>
  create(GenerateStreamResponseSchema, { id, model, frame: { case: "textDelta", value: text } });

describe("a GenerateStream frame on the wire", () => {
  // The hand-written path must be toBinary's bytes exactly: episodes and clients in other
  // languages see what toBinary would write, so any difference is a determinism bug.
  const texts = ["", " ", "Hello", "é", "日本語のテキスト", "🙂 emoji", "x".repeat(127), "y".repeat(128), "z".repeat(20_000), "line\nbreak\u0000nul"];
  const ids = ["", "gen-default-1", `gen-ü-${"9".repeat(200)}`];
  const models = ["", "modelstub", "m".repeat(300)];

  it("is the bytes toBinary writes for every text delta, including empty and multi-byte text and long fields", () => {
    for (const id of ids)
      for (const model of models)
        for (const text of texts) {
          const frame = textFrame(id, model, text);
          expect(
            Buffer.from(encodeStreamFrame(frame)).equals(Buffer.from(toBinary(GenerateStreamResponseSchema, frame))),
            JSON.stringify({ id, model, text: text.slice(0, 20) }),
          ).toBe(true);
        }
  });

  it("is the bytes toBinary writes for tool-call deltas and the final frame", () => {
    const frames = [
      create(GenerateStreamResponseSchema, {
        id: "gen-s-2",
        model: "m",
        frame: { case: "toolCallDelta", value: { index: 1, id: "call-s-2-1", name: "bash", arguments: '{"command":' } },
      }),
      create(GenerateStreamResponseSchema, {
        id: "gen-s-2",
        model: "m",
        frame: { case: "final", value: { finishReason: FinishReason.TOOL_CALLS, usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 } } },
      }),
    ];
    for (const f of frames) expect(Buffer.from(encodeStreamFrame(f)).equals(Buffer.from(toBinary(GenerateStreamResponseSchema, f)))).toBe(true);
  });

  it("is the same bytes when sent from the reused buffer, and a frame past 64 KiB keeps a buffer of its own", () => {
    const frames = [textFrame("gen-s-1", "m", "word ".repeat(3000)), textFrame("gen-s-1", "m", "é"), textFrame("gen-s-1", "m", "x".repeat(70_000))];
    for (const f of frames) expect(sendStreamFrame(f).equals(Buffer.from(toBinary(GenerateStreamResponseSchema, f)))).toBe(true);
    // grpc-js copies what the serializer gives before the next frame is made; a large frame's
    // bytes are its own, and stay whole after the next one is sent.
    const large = sendStreamFrame(frames[2]!);
    sendStreamFrame(frames[0]!);
    expect(large.equals(Buffer.from(toBinary(GenerateStreamResponseSchema, frames[2]!)))).toBe(true);
  });
});
