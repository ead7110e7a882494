import { toJson } from "@bufbuild/protobuf";
import type { FileHandle } from "node:fs/promises";
import { EpisodeCallSchema, EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { encodeEpisodeCall } from "../engine/encode-episode.js";
import { callTag, episodePieces, fieldHead } from "../engine/episode-pieces.js";

/**
 * How much of an episode one turn of the event loop encodes before its piece is written: the
 * file is written a piece at a time, each awaited, so the loop serves other calls in between.
 * Encoding a 64 MiB episode whole (toBinary, then toJsonString and its conversion to bytes)
 * held the loop 120-760 ms on a busy 2-core machine.
 */
const pieceBytes = 2 * 1024 * 1024;

/** Writes `parts` once they hold pieceBytes or more, and empties them; awaiting lets the loop run. */
async function flush(file: FileHandle, parts: (Uint8Array | string)[], size: number, force = false): Promise<number> {
  if (size < pieceBytes && !force) return size;
  if (parts.length > 0) {
    if (typeof parts[0] === "string") await file.write(parts.join(""));
    else await file.write(Buffer.concat(parts as Uint8Array[]));
  }
  parts.length = 0;
  return 0;
}

/**
 * The episode's deterministic bytes, written a piece at a time: each call encoded by the
 * hand-written encoder (what toBinary(EpisodeCallSchema) writes, laid out as encodeEpisode lays
 * them, which is what toBinary(EpisodeSchema) writes: test/engine/episode-plan-bytes.test.ts),
 * so the file is the .binpb GetEpisode gives.
 */
export async function writeBinpb(file: FileHandle, episode: Episode): Promise<void> {
  const plan = episode.faultPlan && { name: episode.faultPlan.name, digest: episode.faultPlan.digest, seed: episode.faultPlan.chaosSeed };
  const parts: Uint8Array[] = [...episodePieces(episode.session, []).pieces];
  let size = 0;
  for (const call of episode.calls) {
    const bytes = encodeEpisodeCall(call);
    parts.push(fieldHead(callTag, bytes.length), bytes);
    size = await flush(file, parts, size + bytes.length);
  }
  if (plan) parts.push(...episodePieces("", [], plan).pieces);
  await flush(file, parts, size, true);
}

/** `text` pretty-printed at `depth` levels (2 spaces each) inside an enclosing JSON value. */
const indented = (text: string, depth: number) => text.replace(/\n/g, `\n${"  ".repeat(depth)}`);

/**
 * The episode as readable JSON, written a call at a time: exactly what toJsonString(EpisodeSchema,
 * episode, { prettySpaces: 2, useProtoFieldName: true }) gives (JSON.stringify of toJson, two
 * spaces; test/regressions/record-dir-writes-in-order.test.ts compares them), then a newline.
 * Fields in number order, as toJson puts them: session, calls, fault_plan; empty ones left out.
 */
export async function writeJson(file: FileHandle, episode: Episode): Promise<void> {
  const opts = { useProtoFieldName: true } as const;
  const rest = toJson(EpisodeSchema, { ...episode, calls: [] }, opts) as Record<string, unknown>;
  const before = rest["session"] === undefined ? [] : [`"session": ${JSON.stringify(rest["session"])}`];
  const after = rest["fault_plan"] === undefined ? [] : [`"fault_plan": ${indented(JSON.stringify(rest["fault_plan"], null, 2), 1)}`];
  if (episode.calls.length === 0) {
    const fields = [...before, ...after];
    await file.write(fields.length > 0 ? `{\n  ${fields.join(",\n  ")}\n}\n` : "{}\n");
    return;
  }
  const parts: string[] = [`{\n${before.map((f) => `  ${f},\n`).join("")}  "calls": [\n`];
  let size = 0;
  for (let i = 0; i < episode.calls.length; i++) {
    const text = `${i > 0 ? ",\n" : ""}    ${indented(JSON.stringify(toJson(EpisodeCallSchema, episode.calls[i]!, opts), null, 2), 2)}`;
    parts.push(text);
    size = await flush(file, parts, size + text.length);
  }
  parts.push(`\n  ]${after.map((f) => `,\n  ${f}`).join("")}\n}\n`);
  await flush(file, parts, size, true);
}
