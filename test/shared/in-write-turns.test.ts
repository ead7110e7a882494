import { describe, expect, it } from "vitest";
import { createPacedWriter, type PaceSink } from "../../src/engine/paced-writer.js";
import { inWriteTurns, writeTurnMs } from "../../src/shared/heavy-turns.js";

/*
 * A large stream writes a slice per turn of the event loop (issue 27, item 5): beside 64 stalled
 * SSE readers, one burst of the paced writer wrote MBs of events to loopback before the socket
 * first said it was full, and every other session's call waited for it.
 */

/** A transport that always has room, and records what it was given. */
function roomySink(got: string[]): PaceSink<string> {
  return { put: (p) => (got.push(p), true), onRoom: () => () => {}, gone: () => false };
}

/** Pieces that each take `ms` of wall time to make, as rendering a large event does. */
function* slowPieces(count: number, ms: number): Generator<string> {
  for (let i = 0; i < count; i++) {
    const end = performance.now() + ms;
    while (performance.now() < end);
    yield `piece ${i}`;
  }
}

describe("inWriteTurns", () => {
  it("lets other work run between the slices of a large frame, and hands over every piece in order", async () => {
    const got: string[] = [];
    const writer = createPacedWriter(inWriteTurns(roomySink(got)));
    const count = Math.ceil((writeTurnMs * 5) / 2);
    let otherWorkAt: number | undefined;
    setImmediate(() => (otherWorkAt = got.length));
    await writer.write(slowPieces(count, 2));
    expect(got).toEqual(Array.from({ length: count }, (_, i) => `piece ${i}`));
    // Another session's callback, due on the next turn, ran before the frame was done.
    expect(otherWorkAt).toBeLessThan(count);
    writer.release();
  });

  it("never holds back a small frame: it goes at once, with room to spare", () => {
    const got: string[] = [];
    const writer = createPacedWriter(inWriteTurns(roomySink(got)));
    expect(writer.write(["one word"])).toBeUndefined();
    expect(got).toEqual(["one word"]);
    writer.release();
  });

  it("waits for the transport's own room when the transport is full", async () => {
    const got: string[] = [];
    let room: (() => void) | undefined;
    const sink: PaceSink<string> = {
      put: (p) => (got.push(p), got.length % 2 === 1),
      onRoom: (r) => ((room = r), () => (room = undefined)),
      gone: () => false,
    };
    const writer = createPacedWriter(inWriteTurns(sink));
    const done = writer.write(["a", "b", "c"]);
    expect(got).toEqual(["a", "b"]);
    room!();
    await done;
    expect(got).toEqual(["a", "b", "c"]);
    writer.release();
  });

  it("resumes a large stream on a heavy turn when its transport has room again, so many draining at once take turns", async () => {
    const got: string[] = [];
    let room: (() => void) | undefined;
    let full = false;
    const sink: PaceSink<string> = { put: (p) => (got.push(p), !full), onRoom: (r) => ((room = r), () => (room = undefined)), gone: () => false };
    const writer = createPacedWriter(inWriteTurns(sink));
    // A large frame: it uses up a turn, so the stream counts as large from then on.
    await writer.write(slowPieces(Math.ceil(writeTurnMs / 2) + 2, 2));
    // The transport fills on the next piece, then drains.
    full = true;
    const done = writer.write(["filling", "after the drain"]);
    full = false;
    let otherWork = false;
    setImmediate(() => (otherWork = true));
    room!();
    // Not at once: the loop's other work comes first.
    expect(got.at(-1)).toBe("filling");
    await done;
    expect(got.at(-1)).toBe("after the drain");
    expect(otherWork).toBe(true);
    writer.release();
  });
});
