import { Role, type GenerateRequest, type GenerateResponse, type Message, type ToolCall, type Usage } from "../../gen/modelstub/v1/model_pb.js";
import type { CompiledReply, TemplateContext } from "../script/compiled-script.js";
import { countReplyTokens, countRequestTokens } from "../shared/count-tokens.js";
import type { CallIds } from "../shared/call-ids.js";
import { splitChunks, type Chunking } from "../shared/split-chunks.js";
import { maxTemplateOutputBytes, TemplateTooLargeError } from "../shared/template-too-large-error.js";

/** A reply rendered for one call: the whole response, and how it is cut into stream chunks. */
export interface RenderedReply {
  response: GenerateResponse;
  /** The text's chunks as the script lists them (they join to the text), or undefined: cut by `chunking`. */
  textChunks: readonly string[] | undefined;
  /** How the text (when it lists no chunks) and each tool call's arguments are cut. */
  chunking: Chunking;
  /**
   * Content chunks in stream order, as strings: text deltas, then each tool call's header and
   * fragments. One object per chunk (half a million for a 1 MiB echo): the engine plans its
   * frames without them (plan-frames.ts); the recorder answers in them.
   */
  chunks(): StreamChunk[];
}

/** One content frame of a stream, before it becomes a wire message. */
export type StreamChunk = { kind: "text"; text: string } | { kind: "tool"; index: number; id: string; name: string; arguments: string };

/** Renders a compiled reply for one call. */
export function renderReply(reply: CompiledReply, ctx: TemplateContext, request: GenerateRequest, ids: CallIds): RenderedReply {
  const text = reply.text.literal ?? reply.text.render(ctx);
  const explicitChunks = reply.chunks?.map((c) => c.literal ?? c.render(ctx));
  // Messages are written as complete literals rather than through create(): this runs once per
  // call, and create() copying field by field showed in profiles. The types require every field,
  // so a field added to the proto fails to compile here instead of going missing.
  const toolCalls: ToolCall[] = reply.toolCalls.map((t, i) => ({
    $typeName: "modelstub.v1.ToolCall",
    id: t.id ?? ids.toolCall(i),
    name: t.name,
    arguments: t.literalArguments ?? t.arguments(ctx),
  }));
  // Each template is bounded on its own, but a reply can hold many (four `{{last_user}}` in one
  // arguments mapping): the bound is on the reply. A reply without templates is what the script
  // author wrote, and is not measured on every call.
  if (reply.text.literal === undefined || reply.toolCalls.some((t) => t.literalArguments === undefined)) {
    let size = Buffer.byteLength(text);
    for (const c of toolCalls) size += Buffer.byteLength(c.arguments);
    if (size > maxTemplateOutputBytes) throw new TemplateTooLargeError(size);
  }
  const output = reply.usage.output ?? countReplyTokens(text, toolCalls);
  const input = reply.usage.input ?? countRequestTokens(request);
  const usage: Usage = { $typeName: "modelstub.v1.Usage", inputTokens: input, outputTokens: output, totalTokens: input + output };
  const message: Message = { $typeName: "modelstub.v1.Message", role: Role.ASSISTANT, content: text, toolCalls, toolCallId: "", name: "" };
  const response: GenerateResponse = {
    $typeName: "modelstub.v1.GenerateResponse",
    id: ids.response,
    model: ctx.model,
    message,
    finishReason: reply.finishReason,
    usage,
  };
  return {
    response,
    textChunks: explicitChunks,
    chunking: reply.chunking,
    chunks() {
      const out: StreamChunk[] = (explicitChunks ?? splitChunks(text, reply.chunking)).map((t) => ({ kind: "text", text: t }));
      toolCalls.forEach((c, index) => {
        out.push({ kind: "tool", index, id: c.id, name: c.name, arguments: "" });
        for (const fragment of splitChunks(c.arguments, reply.chunking)) {
          out.push({ kind: "tool", index, id: "", name: "", arguments: fragment });
        }
      });
      return out;
    },
  };
}
