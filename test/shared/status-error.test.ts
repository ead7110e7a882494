import { describe, expect, it } from "vitest";
import { Code } from "../../src/index.js";
import { errorText, StatusError } from "../../src/shared/status-error.js";

describe("StatusError", () => {
  it("carries a status: its code, its message as the error's, its trailers in order", () => {
    const e = new StatusError({
      code: Code.NOT_FOUND,
      message: "no session",
      trailers: [
        ["a", "1"],
        ["b", "2"],
      ],
    });
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toBe("no session");
    expect(e.toStatus()).toEqual({
      code: Code.NOT_FOUND,
      message: "no session",
      trailers: [
        ["a", "1"],
        ["b", "2"],
      ],
    });
  });

  it("keeps retryable: false, and only that, in its status", () => {
    const capped = new StatusError({ code: Code.RESOURCE_EXHAUSTED, message: "cap", trailers: [], retryable: false });
    expect(capped.toStatus()).toEqual({ code: Code.RESOURCE_EXHAUSTED, message: "cap", trailers: [], retryable: false });
    expect("retryable" in new StatusError({ code: Code.INTERNAL, message: "x", trailers: [] }).toStatus()).toBe(false);
  });

  it("from() keeps a StatusError as it is", () => {
    const e = new StatusError({ code: Code.UNAVAILABLE, message: "down", trailers: [] });
    expect(StatusError.from(e)).toBe(e);
  });

  it("from() turns anything else thrown into INTERNAL, with its words", () => {
    expect(StatusError.from(new Error("engine exploded")).toStatus()).toEqual({
      code: Code.INTERNAL,
      message: "modelstub internal error: engine exploded",
      trailers: [],
    });
    expect(StatusError.from("a string").message).toBe("modelstub internal error: a string");
    expect(StatusError.from(undefined).message).toBe("modelstub internal error: undefined");
  });
});

describe("errorText()", () => {
  it("gives an Error's message, and anything else as a string", () => {
    expect(errorText(new TypeError("bad"))).toBe("bad");
    expect(errorText(42)).toBe("42");
  });
});
