import { indexChunks, listedIndex, type ChunkIndex } from "../shared/index-chunks.js";
import type { RenderedReply, StreamChunk } from "./render-reply.js";

/**
 * The most content frames one stream reply is sent in. A reply of more chunks (a 1 MiB echo cut
 * into words makes half a million) has consecutive chunks of one run coalesced into a frame,
 * evenly. Every frame costs the same framing whatever it carries (about 60 bytes on gRPC, 200 in
 * an SSE event, more while it waits in a buffer): with 4096, a reply's framing stays within
 * about its own size, and the bound on a rendered reply (1 MiB) bounds its frames too.
 */
export const maxStreamFrames = 4096;

/**
 * How much text (UTF-16 units) a coalesced frame carries at least, on average: a reply past
 * maxStreamFrames chunks is coalesced into at most one frame per this much of its text (59
 * frames for a 960 KB echo). Each frame costs the transport about the same CPU whatever it
 * carries: bare grpc-js, passthrough serializers, spends 17 ms of CPU writing 4,097 messages of
 * 240 bytes and 7 ms for 469 of 2 KiB, where one 960 KB message costs 1 ms and modelstub's
 * whole unary call of that echo 6-8 ms. So no engine could stream that echo in 4,096 frames
 * for less than three times its unary cost; in frames of 2 KiB it measured 2.7-3.1x. On a
 * quiet machine, gRPC, with every thread's CPU counted: 1.60-1.76x in frames of 8 KiB, 1.37-1.44x
 * of 16 KiB (with the reused frame buffer of wire/encode-stream-frame.ts in both), 32 KiB no
 * better (docs/performance.md, "Streaming costs what unary costs"). A stalled reader holds one
 * frame more than the transport's buffer, so the frame stays small beside it.
 */
export const minCoalescedFrameChars = 16_384;

/** The content frames of a reply: `counts[i]` is how many of the script's chunks frame i carries (one each when absent). */
export interface FramePlan {
  frames: StreamChunk[];
  counts: number[] | undefined;
}

/**
 * One stretch of the reply's chunks, in stream order: the text, a tool call's header (one chunk,
 * always a frame of its own), or a tool call's arguments; `ends.endAt(i)` is where its chunk i
 * ends in `text`. The text's chunks may be listed by the script (`listed`, which join to the text).
 */
interface Source {
  kind: "text" | "header" | "arguments";
  /** The tool call's index (tool sources). */
  index: number;
  text: string;
  listed: readonly string[] | undefined;
  ends: ChunkIndex;
}

const headerEnds = listedIndex(new Uint32Array(1));

function listedEnds(listed: readonly string[]): ChunkIndex {
  const ends = new Uint32Array(listed.length);
  let at = 0;
  for (let i = 0; i < listed.length; i++) ends[i] = at += listed[i]!.length;
  return listedIndex(ends);
}

function sourcesOf(rendered: RenderedReply): Source[] {
  const { response, textChunks, chunking } = rendered;
  const text = response.message?.content ?? "";
  const sources: Source[] = [{ kind: "text", index: 0, text, listed: textChunks, ends: textChunks ? listedEnds(textChunks) : indexChunks(text, chunking) }];
  response.message?.toolCalls.forEach((c, index) => {
    sources.push({ kind: "header", index, text: "", listed: undefined, ends: headerEnds });
    sources.push({ kind: "arguments", index, text: c.arguments, listed: undefined, ends: indexChunks(c.arguments, chunking) });
  });
  return sources;
}

/**
 * Plans a reply's content frames: its chunks as they are, or, past maxStreamFrames of them,
 * coalesced to at most one frame per minCoalescedFrameChars of the reply's text (and never more
 * than maxStreamFrames). A coalesced frame joins consecutive chunks of one run: the text, or
 * one tool call's argument fragments (a tool call's header frame stays alone). No frame spans
 * the break (`breakAt`), so a break still comes after exactly its chunks. Every frame is a slice
 * of the response's own text (a listed chunk, alone in its frame, is the script's own string):
 * nothing is copied, and no chunk is made a string of its own: one pass over the text counts
 * its chunks (indexChunks), and each frame is cut where the chunks at its edges end.
 */
export function planFrames(rendered: RenderedReply, breakAt: number): FramePlan {
  const sources = sourcesOf(rendered);
  // Runs: the sources' chunks cut at the break, as [source, first chunk, end chunk) in the source.
  const runs: [Source, number, number][] = [];
  let total = 0;
  let chars = 0;
  for (const s of sources) {
    chars += s.text.length;
    const count = s.ends.count;
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
    const most = Math.min(maxStreamFrames, Math.ceil(chars / minCoalescedFrameChars));
    let hi = total;
    while (group < hi) {
      const mid = (group + hi) >>> 1;
      if (framesWith(mid) <= most) hi = mid;
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
      const text = s.listed && n === 1 ? s.listed[a]! : s.text.slice(a === 0 ? 0 : s.ends.endAt(a - 1), s.ends.endAt(a + n - 1));
      frames.push(s.kind === "text" ? { kind: "text", text } : { kind: "tool", index: s.index, id: "", name: "", arguments: text });
      counts.push(n);
    }
  }
  return { frames, counts: group === 1 ? undefined : counts };
}
