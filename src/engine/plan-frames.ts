import { chunkEnds } from "../shared/split-chunks.js";
import type { RenderedReply, StreamChunk } from "./render-reply.js";

/**
 * The most content frames one stream reply is sent in. A reply of more chunks (a 1 MiB echo cut
 * into words makes half a million) has consecutive chunks of one run coalesced into a frame,
 * evenly. Every frame costs the same framing whatever it carries (about 60 bytes on gRPC, 200 in
 * an SSE event, more while it waits in a buffer): with 4096, a reply's framing stays within
 * about its own size, and the bound on a rendered reply (1 MiB) bounds its frames too.
 */
export const maxStreamFrames = 4096;

/** The content frames of a reply: `counts[i]` is how many of the script's chunks frame i carries (one each when absent). */
export interface FramePlan {
  frames: StreamChunk[];
  counts: number[] | undefined;
}

/**
 * One stretch of the reply's chunks, in stream order: the text, a tool call's header (one chunk,
 * always a frame of its own), or a tool call's arguments; `ends[i]` is where its chunk i ends in
 * `text`. The text's chunks may be listed by the script (`listed`, which join to the text).
 */
interface Source {
  kind: "text" | "header" | "arguments";
  /** The tool call's index (tool sources). */
  index: number;
  text: string;
  listed: readonly string[] | undefined;
  ends: Uint32Array;
}

const headerEnds = new Uint32Array(1);

function listedEnds(listed: readonly string[]): Uint32Array {
  const ends = new Uint32Array(listed.length);
  let at = 0;
  listed.forEach((c, i) => (ends[i] = at += c.length));
  return ends;
}

function sourcesOf(rendered: RenderedReply): Source[] {
  const { response, textChunks, chunking } = rendered;
  const text = response.message?.content ?? "";
  const sources: Source[] = [{ kind: "text", index: 0, text, listed: textChunks, ends: textChunks ? listedEnds(textChunks) : chunkEnds(text, chunking) }];
  response.message?.toolCalls.forEach((c, index) => {
    sources.push({ kind: "header", index, text: "", listed: undefined, ends: headerEnds });
    sources.push({ kind: "arguments", index, text: c.arguments, listed: undefined, ends: chunkEnds(c.arguments, chunking) });
  });
  return sources;
}

/**
 * Plans a reply's content frames: its chunks as they are, or coalesced to at most
 * maxStreamFrames frames. A coalesced frame joins consecutive chunks of one run: the text, or
 * one tool call's argument fragments (a tool call's header frame stays alone). No frame spans
 * the break (`breakAt`), so a break still comes after exactly its chunks. Every frame is a slice
 * of the response's own text (a listed chunk, alone in its frame, is the script's own string):
 * nothing is copied, and no chunk is made a string of its own: one pass over the text finds
 * where its chunks end (chunkEnds), and each frame is cut at those ends.
 */
export function planFrames(rendered: RenderedReply, breakAt: number): FramePlan {
  const sources = sourcesOf(rendered);
  // Runs: the sources' chunks cut at the break, as [source, first chunk, end chunk) in the source.
  const runs: [Source, number, number][] = [];
  let total = 0;
  for (const s of sources) {
    const count = s.ends.length;
    if (count === 0) continue;
    const cut = breakAt - total;
    if (cut > 0 && cut < count) runs.push([s, 0, cut], [s, cut, count]);
    else runs.push([s, 0, count]);
    total += count;
  }
  const framesWith = (group: number) => {
    let n = 0;
    for (const [, a, b] of runs) n += Math.ceil((b - a) / group);
    return n;
  };
  // The smallest group that fits: frames only get fewer as groups grow. With more runs than
  // frames allowed (thousands of tool calls), every run becomes one frame.
  let group = 1;
  if (total > maxStreamFrames) {
    let hi = total;
    while (group < hi) {
      const mid = (group + hi) >>> 1;
      if (framesWith(mid) <= maxStreamFrames) hi = mid;
      else group = mid + 1;
    }
  }
  const frames: StreamChunk[] = [];
  const counts: number[] = [];
  const calls = rendered.response.message?.toolCalls ?? [];
  for (const [s, first, end] of runs) {
    if (s.kind === "header") {
      const c = calls[s.index]!;
      frames.push({ kind: "tool", index: s.index, id: c.id, name: c.name, arguments: "" });
      counts.push(1);
      continue;
    }
    for (let a = first; a < end; a += group) {
      const n = Math.min(group, end - a);
      const text = s.listed && n === 1 ? s.listed[a]! : s.text.slice(a === 0 ? 0 : s.ends[a - 1]!, s.ends[a + n - 1]!);
      frames.push(s.kind === "text" ? { kind: "text", text } : { kind: "tool", index: s.index, id: "", name: "", arguments: text });
      counts.push(n);
    }
  }
  return { frames, counts: group === 1 ? undefined : counts };
}
