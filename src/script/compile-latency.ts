import { maxDurationMs, parseDuration } from "./parse-duration.js";
import type { ChunkingInput, LatencyInput } from "./script-schema.js";
import type { Chunking } from "./compiled-script.js";
import type { Report } from "./report.js";

/** A declared wait in ms, refused past maxDurationMs (see there why); `what` names it in the message. */
function checkedDuration(ms: number, what: string, path: (string | number)[], report: Report): number {
  if (ms <= maxDurationMs) return ms;
  report(
    path,
    `${what} is longer than the longest wait, 24 days (${maxDurationMs} ms)`,
    "timers cannot wait longer; for a call that never answers, use hang: true",
  );
  return maxDurationMs;
}

function rateWait(chunksPerSecond: number, path: (string | number)[], report: Report): number {
  const ms = Math.round(1000 / chunksPerSecond);
  return checkedDuration(ms, `chunks_per_second ${chunksPerSecond} (a wait of ${ms} ms per chunk)`, path, report);
}

/** The waits of a `latency:` (first byte, per chunk); what it leaves out is `inherited`. */
export function compileLatency(
  l: LatencyInput | undefined,
  inherited: { first: number; per: number },
  path: (string | number)[],
  report: Report,
): { first: number; per: number } {
  if (l === undefined) return inherited;
  const duration = (d: number | string, at: (string | number)[]) => {
    const ms = parseDuration(d)!;
    return checkedDuration(ms, typeof d === "number" ? `the duration ${d} ms` : `the duration ${JSON.stringify(d)} (${ms} ms)`, at, report);
  };
  if (typeof l === "number" || typeof l === "string") return { first: duration(l, path), per: inherited.per };
  if (l.per_chunk !== undefined && l.chunks_per_second !== undefined) {
    report(
      path,
      "per_chunk and chunks_per_second both set the wait between chunks: expected one of them",
      "keep per_chunk for a fixed wait (like 50ms), or chunks_per_second for a rate (like 20)",
      { key: "chunks_per_second" },
    );
  }
  const per =
    l.per_chunk !== undefined
      ? duration(l.per_chunk, [...path, "per_chunk"])
      : l.chunks_per_second !== undefined
        ? rateWait(l.chunks_per_second, [...path, "chunks_per_second"], report)
        : inherited.per;
  return { first: l.first_byte !== undefined ? duration(l.first_byte, [...path, "first_byte"]) : inherited.first, per };
}

/** How a reply is cut into chunks, from a `chunking:`; `inherited` when it is left out. */
export function compileChunking(c: ChunkingInput | undefined, inherited: Chunking): Chunking {
  if (c === undefined) return inherited;
  if (c === "words" || c === "none") return { kind: c };
  return { kind: "chars", n: c.chars };
}
