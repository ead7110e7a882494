import { describe, expect, it } from "vitest";
import { ByteArena } from "../../src/engine/byte-arena.js";

describe("ByteArena", () => {
  it("hands out ranges of exactly the size asked that never overlap, across chunks", () => {
    const arena = new ByteArena();
    const sizes = [1, 700, 400, 3000, 1, 64 * 1024, 5, 2048, 64 * 1024 + 1, 9];
    const got = sizes.map((n, i) => {
      const b = arena.alloc(n);
      b.fill(i + 1);
      return b;
    });
    got.forEach((b, i) => {
      expect(b.length).toBe(sizes[i]);
      // Each range still holds what was written to it: no later range wrote over it.
      expect(b.every((x) => x === i + 1)).toBe(true);
    });
  });

  it("gives a call larger than a chunk a buffer of its own, exactly its size", () => {
    const big = new ByteArena().alloc(100_000);
    expect(big.length).toBe(100_000);
    expect(big.buffer.byteLength).toBe(100_000);
  });

  it("keeps small calls together: 1,000 calls of 200 bytes need a handful of backing buffers", () => {
    const arena = new ByteArena();
    const buffers = new Set(Array.from({ length: 1000 }, () => arena.alloc(200).buffer));
    expect(buffers.size).toBeLessThan(10);
  });
});
