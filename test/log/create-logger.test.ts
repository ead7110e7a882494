import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/create-logger.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("createLogger()", () => {
  it("formats and writes nothing while the call runs: the turn's lines go out together afterwards", async () => {
    const writes: string[] = [];
    const logger = createLogger({ sink: { write: (chunk) => writes.push(chunk) } });
    let read = false;
    logger.info("first", {
      get lazy() {
        read = true;
        return 1;
      },
    });
    logger.warn("second");
    expect(read).toBe(false);
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['{"level":"info","msg":"first","lazy":1}\n{"level":"warn","msg":"second"}\n']);
  });

  it("writes a line for a field JSON cannot carry instead of throwing after the call", async () => {
    const writes: string[] = [];
    const logger = createLogger({ sink: { write: (chunk) => writes.push(chunk) } });
    logger.info("big", { n: 1n });
    logger.info("after");
    await nextTurn();
    expect(writes.join("").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { level: "error", msg: "cannot format a log line", line: "big", error: expect.stringContaining("BigInt") },
      { level: "info", msg: "after" },
    ]);
  });

  it("keeps debug lines below --log-level info, and writes them at debug", async () => {
    for (const [level, expected] of [
      ["info", ""],
      ["debug", "modelstub debug: script loaded file=a.yaml\n"],
    ] as const) {
      const writes: string[] = [];
      const logger = createLogger({ level, format: "text", sink: { write: (chunk) => writes.push(chunk) } });
      logger.debug("script loaded", { file: "a.yaml" });
      logger.flush();
      expect(writes.join("")).toBe(expected);
    }
  });
});
