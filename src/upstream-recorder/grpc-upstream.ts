import { FinishReason, type GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import { deadlineStatus } from "../engine/execution.js";
import { openGrpcPort } from "../port/grpc-port.js";
import { ModelCallError } from "../port/model-port.js";
import { Code } from "../shared/status-code.js";
import {
  idleLimit,
  msSince,
  stalledMessage,
  type Upstream,
  type UpstreamBreak,
  type UpstreamCall,
  type UpstreamOptions,
  type UpstreamReply,
  type UpstreamResult,
} from "./upstream.js";

const finishNames: Record<number, UpstreamReply["finishReason"]> = {
  [FinishReason.STOP]: "stop",
  [FinishReason.LENGTH]: "length",
  [FinishReason.TOOL_CALLS]: "tool_calls",
  [FinishReason.CONTENT_FILTER]: "content_filter",
};

const finishOf = (f: FinishReason, tools: number): UpstreamReply["finishReason"] => finishNames[f] ?? (tools > 0 ? "tool_calls" : "stop");

/** A unary response as the recorder keeps it. */
function replyOf(res: GenerateResponse): UpstreamReply {
  const m = res.message;
  const calls = (m?.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  const text = m?.content ?? "";
  const usage = res.usage ? { input: res.usage.inputTokens, output: res.usage.outputTokens } : undefined;
  return { text, chunks: text ? [text] : [], toolCalls: calls, finishReason: finishOf(res.finishReason, calls.length), usage, model: res.model };
}

/**
 * Whether a status is grpc-js's report of a link reset under the call, not a status the
 * upstream sent: INTERNAL "Received RST_STREAM with code N..." (the stream reset, as a scripted
 * `then: drop` or a crashed server does) and UNAVAILABLE "Connection dropped" (the whole
 * connection gone). grpc-js makes these up itself, with no trailers, when no status arrived.
 * What cannot be told apart: an upstream that sends a real status with this very text, and
 * which reset it was (a drop, a crash, nghttp2's rapid-reset guard): all are recorded as a drop,
 * which replays as the RST_STREAM a scripted drop sends.
 */
function droppedLink(err: ModelCallError): boolean {
  if (err.trailers.length > 0) return false;
  return (
    (err.code === Code.INTERNAL && /^Received RST_STREAM with code \d+/.test(err.details)) ||
    (err.code === Code.UNAVAILABLE && err.details === "Connection dropped")
  );
}

/**
 * Whether a status is the client's deadline cutting the call off, rather than the upstream's
 * own DEADLINE_EXCEEDED: the client's deadline goes upstream with the call, so both arrive as
 * the same code. A cut-off comes when the deadline has passed (grpc-js ends a call at its
 * deadline, not before), or says it is one: a modelstub upstream on the virtual clock reaches
 * the deadline it was sent at once, and answers "cut off by the caller's deadline". Any other
 * DEADLINE_EXCEEDED that came while the client still had time left (a scripted `timeout: true`
 * answers it at once, a gateway its own shorter limit) is the upstream's, and the client got
 * it then too. The slack covers timer granularity: a status within it of the deadline looks
 * the same to the client either way.
 */
export function clientCutOff(err: unknown, elapsedMs: number, budgetMs: number): boolean {
  if (!(err instanceof ModelCallError) || err.code !== Code.DEADLINE_EXCEEDED || !Number.isFinite(budgetMs)) return false;
  return elapsedMs >= budgetMs - deadlineSlackMs || err.details === deadlineStatus.message;
}
const deadlineSlackMs = 5;

/**
 * A status that ended an upstream call, as a result: DEADLINE_EXCEEDED at the client's own
 * deadline is the client's cut-off (replayed as a hang the same deadline ends); the upstream's
 * own, or the recorder's --upstream-timeout, a timeout; the rest are errors.
 */
function statusResult(err: unknown, totalMs: number, clientCut: boolean): UpstreamResult {
  if (!(err instanceof ModelCallError))
    return { kind: "error", code: Code.UNAVAILABLE, message: `upstream failed: ${(err as Error).message}`, trailers: [], totalMs };
  // Before any content: a drop with nothing sent, which a replay resets the same way.
  if (droppedLink(err))
    return {
      kind: "reply",
      reply: { text: "", chunks: [], toolCalls: [], finishReason: "stop", usage: undefined, model: "" },
      firstByteMs: totalMs,
      totalMs,
      broke: { afterChunks: 0, then: "drop", message: err.details },
    };
  if (err.code === Code.DEADLINE_EXCEEDED) return clientCut ? { kind: "aborted", reason: "deadline", totalMs } : { kind: "timeout", totalMs };
  return { kind: "error", code: err.code, message: err.details, trailers: err.trailers.map(([k, v]) => [k, v]), totalMs };
}

/**
 * A gRPC ModelService as the recorder's upstream (another modelstub, or a gateway speaking
 * modelstub.v1), at `address` HOST:PORT over plaintext. The call keeps the client's session and
 * step; a stream keeps its text deltas as the upstream cut them; a stream that ends with a
 * status after some content is a broken stream. No credentials are sent over plaintext.
 */
export function createGrpcUpstream(address: string, options: UpstreamOptions = {}): Upstream {
  const port = openGrpcPort(address);
  const timeoutMs = options.timeoutMs ?? 60_000;
  return {
    describe: `grpc://${address}`,
    close: () => port.close(),
    async call({ method, request, session, step, signal, budgetMs }: UpstreamCall): Promise<UpstreamResult> {
      const t0 = performance.now();
      const req = request.model || !options.model ? request : { ...request, model: options.model };
      const meta = { session, ...(step && !request.stepId ? { step } : {}) };
      if (method === "generate") {
        // The client's deadline goes upstream, so an upstream that hangs is cut off as the client would cut it.
        const o = { ...meta, signal, timeoutMs: Math.min(timeoutMs, budgetMs) };
        try {
          const res = await port.generate(req, o);
          const total = msSince(t0);
          return { kind: "reply", reply: replyOf(res), firstByteMs: total, totalMs: total };
        } catch (err) {
          if (signal.aborted) return { kind: "aborted", reason: "cancelled", totalMs: msSince(t0) };
          const elapsed = performance.now() - t0;
          return statusResult(err, msSince(t0), budgetMs <= timeoutMs && clientCutOff(err, elapsed, budgetMs));
        }
      }
      // A stream takes the client's deadline upstream, and --upstream-timeout bounds only its
      // silences (idleLimit), so a long answer that keeps coming is recorded whole.
      const clientDeadline = Number.isFinite(budgetMs);
      const limit = idleLimit(timeoutMs);
      const o = { ...meta, signal: AbortSignal.any([signal, limit.signal]), ...(clientDeadline ? { timeoutMs: budgetMs } : {}) };
      const chunks: string[] = [];
      const calls: { id: string; name: string; arguments: string }[] = [];
      let finish = FinishReason.UNSPECIFIED;
      let usage: UpstreamReply["usage"];
      let model = "";
      let firstByteMs = -1;
      let sent = 0;
      let lastChunkMs = 0;
      const reply = (): UpstreamReply => ({
        text: chunks.join(""),
        chunks,
        toolCalls: calls.filter((c) => c),
        finishReason: finishOf(finish, calls.length),
        usage,
        model,
      });
      try {
        for await (const f of port.generateStream(req, o)) {
          limit.touch();
          model = f.model;
          if (f.frame.case === "final") {
            finish = f.frame.value.finishReason;
            if (f.frame.value.usage) usage = { input: f.frame.value.usage.inputTokens, output: f.frame.value.usage.outputTokens };
            continue;
          }
          lastChunkMs = msSince(t0);
          if (firstByteMs < 0) firstByteMs = lastChunkMs;
          sent++;
          if (f.frame.case === "textDelta") chunks.push(f.frame.value);
          else if (f.frame.case === "toolCallDelta") {
            const d = f.frame.value;
            const c = (calls[d.index] ??= { id: "", name: "", arguments: "" });
            if (d.id) c.id = d.id;
            c.name += d.name;
            c.arguments += d.arguments;
          }
        }
        return { kind: "reply", reply: reply(), firstByteMs: Math.max(firstByteMs, 0), totalMs: msSince(t0) };
      } catch (err) {
        const broke = (b: Omit<UpstreamBreak, "afterChunks">, totalMs = msSince(t0)): UpstreamResult => ({
          kind: "reply",
          reply: reply(),
          firstByteMs,
          totalMs,
          broke: { afterChunks: sent, ...b },
        });
        // Cut off by the client part-way (its deadline, sent upstream with the call, or its
        // cancel): the upstream had stalled or was still sending. A hang after the chunks so far,
        // which the same deadline ends on replay, as a unary call cut off is a `hang: true`; its
        // time is the last chunk's, the wait after it being the client's.
        const clientCut = signal.aborted || clientCutOff(err, performance.now() - t0, budgetMs);
        if (sent > 0 && clientCut) return broke({ then: "hang", message: "" }, lastChunkMs);
        if (signal.aborted) return { kind: "aborted", reason: "cancelled", totalMs: msSince(t0) };
        // Silent past --upstream-timeout: recorded as openai-upstream.ts records it (why, there).
        if (limit.signal.aborted)
          return sent > 0
            ? broke({ then: "error", code: Code.DEADLINE_EXCEEDED, message: stalledMessage(timeoutMs) }, lastChunkMs)
            : { kind: "timeout", totalMs: msSince(t0) };
        if (sent > 0 && err instanceof ModelCallError) {
          if (droppedLink(err)) return broke({ then: "drop", message: err.details });
          return broke({ then: "error", message: err.details, code: err.code, trailers: err.trailers.map(([k, v]) => [k, v]) });
        }
        return statusResult(err, msSince(t0), clientCut);
      } finally {
        limit.stop();
      }
    },
  };
}
