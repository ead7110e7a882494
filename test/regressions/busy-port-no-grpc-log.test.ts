import { afterEach, describe, expect, it, vi } from "vitest";
import { startServer } from "../../src/index.js";

/*
 * Issue 31, item 9: startServer on a busy port rejected with a clear error, but grpc-js first
 * printed `E No address added out of total 1 resolved` through its global logger (console.error).
 */
afterEach(() => vi.restoreAllMocks());

describe("startServer on a busy port", () => {
  it("rejects naming the address and why, and grpc-js logs nothing", async () => {
    const first = await startServer({ clock: "virtual" });
    const logged: unknown[][] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args));
    try {
      await expect(startServer({ grpc: first.grpcAddress, clock: "virtual" })).rejects.toThrow(
        `startServer: cannot listen on ${first.grpcAddress}: ${first.grpcAddress} is in use (EADDRINUSE): another process listens there; pick another port, or 0 for a free one`,
      );
      expect(logged).toEqual([]);
    } finally {
      await first.close();
    }
  });
});
