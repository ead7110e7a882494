import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, MessageSchema, Role, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";

/** A request with one user message. */
export function userRequest(text: string, extra: Partial<Omit<GenerateRequest, "$typeName">> = {}): GenerateRequest {
  return create(GenerateRequestSchema, { model: "test-model", messages: [create(MessageSchema, { role: Role.USER, content: text })], ...extra });
}

/** Collects a stream's frames, and the error it ended with, if any. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<{ frames: T[]; error: unknown }> {
  const frames: T[] = [];
  try {
    for await (const f of stream) frames.push(f);
    return { frames, error: undefined };
  } catch (error) {
    return { frames, error };
  }
}
