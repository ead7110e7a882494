import { afterEach, describe, expect, it, vi } from "vitest";
import { record } from "../../src/cli/record.js";

describe("modelstub record's --upstream URL", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused with exit 2 when it holds a user and password, pointing to --upstream-key-env and never printing the password", async () => {
    let err = "";
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
    const code = await record(["--upstream", "http://user:pw-SECRET@127.0.0.1:9/v1", "--out", "never-written.yaml"]);
    vi.restoreAllMocks();
    expect(code).toBe(2);
    expect(err).toContain("modelstub record: --upstream: the upstream URL must not hold a user or password");
    expect(err).toContain("--upstream-key-env");
    expect(err).not.toContain("SECRET");
  });
});
