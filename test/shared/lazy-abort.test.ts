import { describe, expect, it } from "vitest";
import { LazyAbort } from "../../src/shared/lazy-abort.js";

describe("LazyAbort", () => {
  it("makes no signal, and wires nothing, until someone asks for it", () => {
    let wired = 0;
    const lazy = new LazyAbort(() => void wired++);
    expect(lazy.made).toBeUndefined();
    expect(lazy.aborted).toBe(false);
    expect(wired).toBe(0);
    const signal = lazy.signal;
    expect(lazy.signal).toBe(signal);
    expect(lazy.made).toBe(signal);
    expect(wired).toBe(1);
  });

  it("keeps an abort from before the signal was made, and the signal is born aborted with its reason, unwired", () => {
    let wired = 0;
    const lazy = new LazyAbort(() => void wired++);
    lazy.abort("cancelled");
    lazy.abort("deadline");
    expect(lazy.aborted).toBe(true);
    expect(lazy.made).toBeUndefined();
    expect(lazy.signal.aborted).toBe(true);
    expect(lazy.signal.reason).toBe("cancelled");
    expect(wired).toBe(0);
  });

  it("aborts a signal already made, through abort() or through its wiring", () => {
    const direct = new LazyAbort();
    const signal = direct.signal;
    direct.abort("deadline");
    expect(signal.reason).toBe("deadline");

    let cut: ((reason: unknown) => void) | undefined;
    const wired = new LazyAbort((abort) => (cut = abort));
    expect(wired.signal.aborted).toBe(false);
    cut?.("cancelled");
    expect(wired.signal.reason).toBe("cancelled");
    expect(wired.aborted).toBe(true);
  });
});
