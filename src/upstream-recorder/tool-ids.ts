import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, MessageSchema, ToolCallSchema, type GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { toolCallIdOf } from "../shared/call-ids.js";

/**
 * Tool call ids of one recorded session: the client sees the ids modelstub derives on replay
 * (`call-<session>-<sequence>-<index>`), the upstream keeps its own. Each id handed to the
 * client is remembered with the upstream's, and a later request that carries it back (an
 * assistant message's tool call, a tool result's `tool_call_id`) goes upstream with the
 * upstream's id again. An id the recorder never handed out goes upstream as it is.
 */
export class ToolIds {
  private readonly upstreamOf = new Map<string, string>();

  /** Remembers the ids of a reply's tool calls; returns the ids the client gets. */
  remember(session: string, sequence: number, upstreamIds: readonly string[]): string[] {
    return upstreamIds.map((id, i) => {
      const ours = toolCallIdOf(session, sequence, i);
      if (id) this.upstreamOf.set(ours, id);
      return ours;
    });
  }

  /** The request with every id the recorder handed out replaced by the upstream's. */
  toUpstream(request: GenerateRequest): GenerateRequest {
    const back = (id: string) => this.upstreamOf.get(id) ?? id;
    const touched = request.messages.some((m) => this.upstreamOf.has(m.toolCallId) || m.toolCalls.some((c) => this.upstreamOf.has(c.id)));
    if (!touched) return request;
    return create(GenerateRequestSchema, {
      ...request,
      messages: request.messages.map((m) =>
        create(MessageSchema, { ...m, toolCallId: back(m.toolCallId), toolCalls: m.toolCalls.map((c) => create(ToolCallSchema, { ...c, id: back(c.id) })) }),
      ),
    });
  }
}
