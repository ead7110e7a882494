import { Outcome, StreamBreak } from "../../gen/modelstub/v1/episode_pb.js";
import type { GenerateResponse, GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { CallInput } from "./call-input.js";
import type { CompiledBreak, CompiledEntry } from "../script/compiled-script.js";
import type { Ending } from "./ending.js";
import type { Execution } from "./execution.js";
import { planFrames } from "./plan-frames.js";
import type { RenderedReply, StreamChunk } from "./render-reply.js";

/** The stream frame of one chunk of a rendered reply (also how the recorder answers, upstream-recorder/answer-entry.ts). */
export function frameOf(id: string, model: string, chunk: StreamChunk): GenerateStreamResponse {
  // Complete literals, not create(): this runs once per stream chunk (see render-reply.ts).
  return {
    $typeName: "modelstub.v1.GenerateStreamResponse",
    id,
    model,
    frame:
      chunk.kind === "text"
        ? { case: "textDelta", value: chunk.text }
        : {
            case: "toolCallDelta",
            value: { $typeName: "modelstub.v1.ToolCallDelta", index: chunk.index, id: chunk.id, name: chunk.name, arguments: chunk.arguments },
          },
  };
}

/**
 * How a stream break ends the call, `response` being the reply it broke (undefined when it broke
 * before there was one): a status, a dropped link, or a hang until the caller gives up.
 */
export async function breakEnding(brk: CompiledBreak, x: Execution, response: GenerateResponse | undefined): Promise<Ending> {
  if (brk.then === "error")
    return { result: { kind: "status", status: brk.status }, outcome: Outcome.STREAM_BROKEN, status: brk.status, response, streamBreak: StreamBreak.ERROR };
  if (brk.then === "drop") return { result: { kind: "drop" }, outcome: Outcome.STREAM_BROKEN, response, streamBreak: StreamBreak.DROP };
  try {
    return await x.hang();
  } catch (err) {
    return { ...x.endingOf(err), outcome: Outcome.STREAM_BROKEN, response, streamBreak: StreamBreak.HANG };
  }
}

/**
 * Runs a reply entry: its first-byte wait, then its chunks (per-chunk waits, a scripted break:
 * error, drop or hang), then the final frame. A unary call with no break and no per-chunk wait
 * skips the loop; a stream hands every frame to the transport, minding its back-pressure.
 */
export async function runReply(entry: CompiledEntry, rendered: RenderedReply, input: CallInput, x: Execution): Promise<Ending> {
  const action = entry.action as Extract<CompiledEntry["action"], { kind: "reply" }>;
  const { response } = rendered;
  const brk = action.brk;
  const stream = input.method === "stream";
  await x.wait(entry.firstByteMs);
  if (stream || brk || entry.perChunkMs > 0) {
    const { frames, counts } = planFrames(rendered, brk ? brk.afterChunks : -1);
    if (stream) x.streamed = rendered;
    // `done` counts the script's chunks, whatever frames carry them: the break, the per-chunk
    // waits and chunks_sent speak of chunks, so coalescing changes no recorded byte (save for a
    // call cut off between two chunks of one frame, which records the frames it sent).
    for (let f = 0, done = 0; f <= frames.length; f++) {
      // A break past the reply's last chunk (a fault plan's, or a templated reply's, which load
      // cannot count) comes after that last chunk, before the final frame: a break still breaks.
      if (brk && (done === brk.afterChunks || (f === frames.length && done < brk.afterChunks))) return breakEnding(brk, x, response);
      if (f === frames.length) break;
      const n = counts ? counts[f]! : 1;
      if (entry.perChunkMs > 0) for (let k = done === 0 ? 1 : 0; k < n; k++) await x.wait(entry.perChunkMs);
      // A cut-off call writes nothing more, even when its chunks need no wait.
      if (x.aborted) throw x.signal.reason;
      done += n;
      if (stream) {
        const ready = input.onFrame!(frameOf(response.id, response.model, frames[f]!));
        x.chunksSent += n;
        // Back-pressure: a full transport buffer holds the next frame until it drains.
        if (ready) await x.drained(ready);
      }
    }
  }
  if (stream) {
    // The last frame: nothing follows it, so nothing waits for the buffer to drain. The
    // transport ends the call behind it.
    const ready = input.onFrame!({
      $typeName: "modelstub.v1.GenerateStreamResponse",
      id: response.id,
      model: response.model,
      frame: { case: "final", value: { $typeName: "modelstub.v1.StreamFinal", finishReason: response.finishReason, usage: response.usage } },
    });
    ready?.catch(() => {});
  }
  return { result: { kind: "ok", response }, outcome: Outcome.OK, response };
}
