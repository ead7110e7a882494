import { describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/log/call-record.js";
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
    expect(
      writes
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    ).toEqual([
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

  it("writes a call's line as JSON.stringify would write its fields, in one key order on both transports", async () => {
    const records: CallRecord[] = [
      { transport: "grpc", method: "Generate", session: "s", step: "", entry: "entries[0]", sequence: 3, outcome: "OK", code: "OK", declaredMs: 1500 },
      {
        transport: "grpc",
        method: "GenerateStream",
        session: 'a"b\\c\u2028\u0000',
        step: "plan",
        entry: "",
        outcome: "REFUSED",
        code: "INVALID_ARGUMENT",
        declaredMs: 0,
        message: 'bad "step"\n\ud800',
      },
      {
        transport: "http",
        method: "POST /v1/chat/completions",
        status: 499,
        session: "default",
        step: "",
        entry: "",
        outcome: "CANCELLED",
        code: undefined,
        declaredMs: 0,
        message: undefined,
      },
    ];
    const writes: string[] = [];
    const logger = createLogger({ sink: { write: (chunk) => writes.push(chunk) } });
    for (const r of records) logger.call(r);
    await nextTurn();
    const expected = records.map((r) =>
      JSON.stringify({
        level: "info",
        msg: "call",
        transport: r.transport,
        method: r.method,
        status: r.status,
        session: r.session,
        step: r.step,
        entry: r.entry,
        sequence: r.sequence,
        outcome: r.outcome,
        code: r.code,
        declared_ms: r.declaredMs,
        message: r.message,
      }),
    );
    expect(writes.join("")).toBe(expected.map((l) => `${l}\n`).join(""));
  });

  it("writes a call's text line with the same keys, skipping empty ones", () => {
    const writes: string[] = [];
    const logger = createLogger({ format: "text", sink: { write: (chunk) => writes.push(chunk) } });
    logger.call({
      transport: "http",
      method: "POST /v1/chat/completions",
      status: 200,
      session: "default",
      step: "",
      entry: "entries[1]",
      outcome: "OK",
      code: "OK",
      declaredMs: 5,
    });
    logger.flush();
    expect(writes.join("")).toBe(
      'modelstub info: call transport=http method="POST /v1/chat/completions" status=200 session=default entry=entries[1] outcome=OK code=OK declared_ms=5\n',
    );
  });
});
