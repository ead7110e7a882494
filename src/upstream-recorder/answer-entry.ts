import type { GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { CallInput } from "../engine/call-input.js";
import type { CallResult } from "../engine/call-result.js";
import { renderReply } from "../engine/render-reply.js";
import { frameOf } from "../engine/run-reply.js";
import type { CompiledEntry } from "../script/compiled-script.js";
import { loadScriptText } from "../script/load-script.js";
import { textFilesHeld } from "../script/resolve-text-files.js";
import type { EntryInput } from "../script/script-schema.js";
import { writeScript } from "../script/write-script.js";
import { callIdsOf } from "../shared/call-ids.js";
import { Code } from "../shared/status-code.js";

/** Where a recorded entry sits, and whom it answers: what the engine derives ids and messages from. */
export interface AnswerContext {
  session: string;
  sequence: number;
  /** `entries[3]`, `steps.plan[0]`: the entry's place in the written script. */
  ref: string;
  /** The model the reply names: the request's, else the script's default. */
  model: string;
  step: string;
}

/** An entry compiled exactly as the written script will compile it (the same text, through the loader, its `text_file` read from `textFiles`). */
export function compileRecordedEntry(entry: EntryInput, textFiles: ReadonlyMap<string, string> = new Map()): CompiledEntry {
  const text = writeScript({ header: [], lists: [{ key: "", entries: [{ comments: [], entry }] }] });
  return loadScriptText(text, "recorded entry", textFilesHeld(textFiles)).lists.get("")!.entries[0]!;
}

/**
 * Answers the client from the recorded entry, as a replay of the written script will: the reply
 * rendered by the engine's own renderer with the ids it derives (`gen-<session>-<sequence>`,
 * `call-<session>-<sequence>-<i>`), streamed in the entry's chunks, broken where it breaks; a
 * status as scripted (a timeout says `scripted timeout at <ref>`). Nothing waits: the upstream
 * took its time already. Also returns the declared time the replay will record for the call,
 * so the recorder's timeline (and the HTTP front's `created`) matches the replay's.
 */
export async function answerEntry(compiled: CompiledEntry, ctx: AnswerContext, input: CallInput): Promise<{ result: CallResult; declaredMs: number }> {
  const action = compiled.action;
  const fb = compiled.firstByteMs;
  switch (action.kind) {
    case "error":
      return { result: { kind: "status", status: action.status }, declaredMs: fb };
    case "timeout":
      return { result: { kind: "status", status: { code: Code.DEADLINE_EXCEEDED, message: `scripted timeout at ${ctx.ref}`, trailers: [] } }, declaredMs: fb };
    case "hang":
      return { result: { kind: "aborted", reason: "cancelled" }, declaredMs: fb };
    case "reply":
      break;
  }
  const tctx = { lastUser: "", lastToolResult: "", step: ctx.step, model: ctx.model, session: ctx.session, turn: 0, captures: null };
  const rendered = renderReply(action.reply, tctx, input.request, callIdsOf(ctx.session, ctx.sequence));
  const { response } = rendered;
  const chunks = rendered.chunks();
  const brk = action.brk;
  const upTo = brk ? Math.min(brk.afterChunks, chunks.length) : chunks.length;
  const waited = compiled.perChunkMs > 0 || brk || input.method === "stream" ? Math.max(0, upTo - 1) * compiled.perChunkMs : 0;
  const declaredMs = fb + waited;
  if (input.method === "stream") {
    for (let i = 0; i < upTo; i++) {
      if (input.signal.aborted) return { result: { kind: "aborted", reason: "cancelled" }, declaredMs };
      const ready = input.onFrame!(frameOf(response.id, response.model, chunks[i]!));
      if (ready) await ready;
    }
  }
  if (brk) {
    if (brk.then === "drop") return { result: { kind: "drop" }, declaredMs };
    // As a `hang: true`: the client cuts the call off (the front leaves it open until then).
    if (brk.then === "hang") return { result: { kind: "aborted", reason: "cancelled" }, declaredMs };
    return { result: { kind: "status", status: brk.status }, declaredMs };
  }
  if (input.method === "stream") {
    const final: GenerateStreamResponse = {
      $typeName: "modelstub.v1.GenerateStreamResponse",
      id: response.id,
      model: response.model,
      frame: { case: "final", value: { $typeName: "modelstub.v1.StreamFinal", finishReason: response.finishReason, usage: response.usage } },
    };
    input.onFrame!(final)?.catch(() => {});
  }
  return { result: { kind: "ok", response }, declaredMs };
}
