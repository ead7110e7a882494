import { describe, expect, it } from "vitest";
import { loadScriptText } from "../../src/script/load-script.js";
import { maxDurationMs } from "../../src/script/parse-duration.js";

/*
 * Durations had no upper bound, and Node's setTimeout fires after 1 ms when asked to wait more
 * than 2^31-1 ms: a 25-day latency quietly became none on the real clock. The loader now
 * refuses waits over 24 days, wherever they are declared.
 */

const load = (yaml: string) => () => loadScriptText(yaml, "t.yaml");

describe("loadScriptText() with long durations", () => {
  it("accepts the longest wait, 24 days, which Node's timers can still wait", () => {
    expect(maxDurationMs).toBe(2_073_600_000);
    expect(maxDurationMs).toBeLessThan(2 ** 31 - 1);
    const script = load("entries:\n  - latency: { first_byte: 34560m, per_chunk: 2073600000 }\n    reply: x\n")();
    const entry = script.lists.get("")!.entries[0]!;
    expect([entry.firstByteMs, entry.perChunkMs]).toEqual([maxDurationMs, maxDurationMs]);
  });

  it("refuses a longer one in every place a duration goes, naming where and the limit", () => {
    expect(load("entries:\n  - latency: 34561m\n    reply: x\n")).toThrow(
      't.yaml:2:14: entries[0].latency: the duration "34561m" (2073660000 ms) is longer than the longest wait, 24 days (2073600000 ms) (hint: timers cannot wait longer; for a call that never answers, use hang: true)',
    );
    expect(load("defaults:\n  latency: { per_chunk: 2147483648 }\nentries:\n  - reply: x\n")).toThrow(
      "t.yaml:2:25: defaults.latency.per_chunk: the duration 2147483648 ms is longer than the longest wait",
    );
    expect(load("entries:\n  - latency: { chunks_per_second: 0.0000001 }\n    reply: x\n")).toThrow(
      "entries[0].latency.chunks_per_second: chunks_per_second 1e-7 (a wait of 10000000000 ms per chunk) is longer than the longest wait",
    );
  });
});
