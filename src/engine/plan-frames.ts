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
 * Plans a reply's content frames: its chunks as they are, or coalesced to at most
 * maxStreamFrames frames. A coalesced frame joins consecutive chunks of one run: the text, or
 * one tool call's argument fragments (a tool call's header frame stays alone). No frame spans
 * the break (`breakAt`), so a break still comes after exactly its chunks. The joined text is a
 * slice of the response's own text, which the chunks join to exactly: nothing is copied.
 * A separate function so the full chunk list is garbage once planned, never held by a call
 * waiting on a slow reader.
 */
export function planFrames(rendered: RenderedReply, breakAt: number): FramePlan {
  const chunks = rendered.chunks();
  if (chunks.length <= maxStreamFrames) return { frames: chunks, counts: undefined };
  const header = new Uint8Array(chunks.length);
  const runStarts: number[] = [];
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i]!;
    const p = chunks[i - 1];
    if (c.kind === "tool" && (p === undefined || p.kind !== "tool" || p.index !== c.index)) header[i] = 1;
    if (i === 0 || i === breakAt || header[i] || header[i - 1]) runStarts.push(i);
  }
  runStarts.push(chunks.length);
  const framesWith = (group: number) => {
    let n = 0;
    for (let r = 0; r + 1 < runStarts.length; r++) n += Math.ceil((runStarts[r + 1]! - runStarts[r]!) / group);
    return n;
  };
  // The smallest group that fits: frames only get fewer as groups grow. With more runs than
  // frames allowed (thousands of tool calls), every run becomes one frame.
  let lo = 1;
  let hi = chunks.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (framesWith(mid) <= maxStreamFrames) hi = mid;
    else lo = mid + 1;
  }
  const message = rendered.response.message;
  const frames: StreamChunk[] = [];
  const counts: number[] = [];
  let offset = 0; // into the text, or into the current tool call's arguments
  for (let r = 0; r + 1 < runStarts.length; r++) {
    const end = runStarts[r + 1]!;
    for (let a = runStarts[r]!; a < end; a += lo) {
      const b = Math.min(a + lo, end);
      const first = chunks[a]!;
      if (header[a]) offset = 0;
      if (b - a === 1 || header[a]) {
        frames.push(first);
        counts.push(1);
        if (!header[a]) offset += first.kind === "text" ? first.text.length : first.arguments.length;
        continue;
      }
      let length = 0;
      for (let i = a; i < b; i++) {
        const c = chunks[i]!;
        length += c.kind === "text" ? c.text.length : c.arguments.length;
      }
      if (first.kind === "text") {
        frames.push({ kind: "text", text: (message?.content ?? "").slice(offset, offset + length) });
      } else {
        const args = message?.toolCalls[first.index]?.arguments ?? "";
        frames.push({ kind: "tool", index: first.index, id: "", name: "", arguments: args.slice(offset, offset + length) });
      }
      counts.push(b - a);
      offset += length;
    }
  }
  return { frames, counts };
}
