import { splitChunks } from "../shared/split-chunks.js";
import type { CompiledReply } from "./compiled-script.js";
import type { Report } from "./report.js";

/** Explicit chunks must join to the text, and no `{{variable}}` may straddle two chunks. */
export function checkChunks(chunks: readonly string[], text: string, path: (string | number)[], report: Report): void {
  const joined = chunks.join("");
  if (joined !== text) {
    const clip = (t: string) => JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}…` : t);
    report(
      [...path, "chunks"],
      `the chunks join to ${clip(joined)}, but the text is ${clip(text)}`,
      "the chunks must concatenate exactly to the text (or leave text out: it is then the chunks joined)",
    );
    return;
  }
  let offset = 0;
  const cuts = new Set(chunks.slice(0, -1).map((c) => (offset += c.length)));
  for (const m of text.matchAll(/\{\{[^{}]*\}\}/g)) {
    for (let cut = m.index + 1; cut < m.index + m[0].length; cut++) {
      if (cuts.has(cut)) {
        report([...path, "chunks"], `the template variable ${m[0]} is split across two chunks`, "keep each {{variable}} inside one chunk", {
          needle: m[0].slice(0, 2),
        });
        return;
      }
    }
  }
}

/** A break after more chunks than a literal reply streams would never fire: say so at load. */
export function checkBreak(reply: CompiledReply, afterChunks: number, path: (string | number)[], report: Report): void {
  const text = reply.chunks ? reply.chunks.map((c) => c.literal) : [reply.text.literal];
  if (text.some((t) => t === undefined) || reply.toolCalls.some((t) => t.literalArguments === undefined)) return;
  const textChunks = reply.chunks ? reply.chunks.length : splitChunks(reply.text.literal!, reply.chunking).length;
  const total = reply.toolCalls.reduce((n, t) => n + 1 + splitChunks(t.literalArguments!, reply.chunking).length, textChunks);
  if (afterChunks > total) {
    report(
      path,
      `after_chunks is ${afterChunks}, but the reply streams only ${total} chunk${total === 1 ? "" : "s"}, so the break never happens`,
      `use after_chunks from 0 to ${total}`,
      { key: "after_chunks" },
    );
  }
}
