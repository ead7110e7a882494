import { describe, expect, it } from "vitest";
import { EpisodeCallSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { GenerateRequestSchema, SamplingParamsSchema, ToolCallSchema, ToolSchema, UsageSchema } from "../../gen/modelstub/v1/model_pb.js";
import { sameTags, tagOf, tagsOf, twoByteTagOf } from "../../src/wire/field-tag.js";

describe("the codec's tags, read from the descriptors", () => {
  it("are number << 3 | the wire type protobuf-es writes the field's values with", () => {
    expect(tagOf(GenerateRequestSchema.field.model)).toBe(0x0a); // string: length-delimited
    expect(tagOf(GenerateRequestSchema.field.messages)).toBe(0x12); // repeated message
    expect(tagOf(SamplingParamsSchema.field.temperature)).toBe(0x09); // double: 64-bit
    expect(tagOf(SamplingParamsSchema.field.maxTokens)).toBe(0x18); // uint32: varint
    expect(tagOf(SamplingParamsSchema.field.stop)).toBe(0x22); // repeated string
    expect(tagOf(EpisodeCallSchema.field.method)).toBe(0x18); // enum: varint
  });

  it("come by field name, one object per message", () => {
    expect(tagsOf(UsageSchema.field)).toEqual({ inputTokens: 0x08, outputTokens: 0x10, totalTokens: 0x18 });
  });

  it("refuse, at load, a one-byte writer for a field numbered 16 or more, which takes two", () => {
    expect(() => tagOf(EpisodeCallSchema.field.sentTextChunks)).toThrow(
      /modelstub\.v1\.EpisodeCall\.sent_text_chunks \(field 16\) takes a tag of more than one byte/,
    );
    expect(twoByteTagOf(EpisodeCallSchema.field.sentTextChunks)).toEqual([0x82, 0x01]);
    expect(tagsOf(EpisodeCallSchema.field)).not.toHaveProperty("sentTextChunks");
    expect(() => twoByteTagOf(EpisodeCallSchema.field.session)).toThrow(/does not take a two-byte tag/);
  });

  it("of two messages written by one function must agree, or the module refuses to load", () => {
    const toolCall = [ToolCallSchema.field.id, ToolCallSchema.field.name, ToolCallSchema.field.arguments];
    expect(() => sameTags(toolCall, [ToolSchema.field.name, ToolSchema.field.description, ToolSchema.field.parametersJson])).not.toThrow();
    expect(() => sameTags(toolCall, [ToolSchema.field.description, ToolSchema.field.name, ToolSchema.field.parametersJson])).toThrow(/their tags now differ/);
  });
});
