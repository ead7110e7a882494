import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { readBody, textOf } from "../../src/http/read-body.js";
import { readTurnBytes } from "../../src/shared/heavy-turns.js";

/*
 * A body is read in turns of the event loop (issue 27): 64 clients sending 5.8 MB bodies at once
 * had their sockets read in one poll phase, 40-60 ms of the loop, and a body was hashed whole in
 * the turn that decoded it (12-15 ms for 5.8 MB). The chunks, the text and the digest are what
 * they were; only when the body is read changes.
 */

/** A request body arriving: `chunks` pushed in one turn, then the end. */
function arriving(chunks: Buffer[]): PassThrough {
  const req = new PassThrough();
  for (const c of chunks) req.write(c);
  req.end();
  return req;
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("base64");

describe("readBody", () => {
  it("reads a large body that arrived at once over several turns, pausing once a turn has read its share, and loses nothing", async () => {
    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(64 * 1024, 97 + (i % 26)));
    const req = arriving(chunks);
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const read = await readBody(req as unknown as IncomingMessage, 16 * 1024 * 1024);
    counting = false;
    if (read === undefined || read === "too large") throw new Error(`read ${String(read)}`);
    const whole = Buffer.concat(chunks);
    expect(read.size).toBe(whole.length);
    expect(textOf(read.chunks)).toBe(whole.toString("utf8"));
    expect(read.digest()).toBe(sha256(whole));
    // 4 MiB at readTurnBytes a turn: read in 4 parts, with a turn of the loop between any two.
    expect(turns).toBeGreaterThanOrEqual(whole.length / readTurnBytes - 1);
  });

  it("gives a small body the same digest of its bytes, hashed when first asked for", async () => {
    const body = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "héllo" }] }));
    const read = await readBody(arriving([body.subarray(0, 10), body.subarray(10)]) as unknown as IncomingMessage, 1024);
    if (read === undefined || read === "too large") throw new Error(`read ${String(read)}`);
    expect(read.digest()).toBe(sha256(body));
    expect(textOf(read.chunks)).toBe(body.toString("utf8"));
  });

  it("says too large past the limit", async () => {
    expect(await readBody(arriving([Buffer.alloc(600), Buffer.alloc(600)]) as unknown as IncomingMessage, 1000)).toBe("too large");
  });
});
