import { afterEach, describe, expect, it, vi } from "vitest";
import { validate } from "../../src/cli/validate.js";
import { corpus, pathOf } from "./bad-scripts-fixture.js";

describe("modelstub validate", () => {
  let out = "";
  let err = "";
  function capture() {
    out = "";
    err = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((out += String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
  }
  afterEach(() => vi.restoreAllMocks());

  it("exits 1 on a bad file and prints the same lines as the loader, one per issue", async () => {
    const [name, ...lines] = corpus.find(([n]) => n === "entries-key-missing-under-list.yaml")!;
    capture();
    const code = await validate([pathOf("unknown-key-latncy.yaml"), pathOf(name)]);
    vi.restoreAllMocks();
    expect(code).toBe(1);
    expect(out).toBe("");
    const latncy = corpus.find(([n]) => n === "unknown-key-latncy.yaml")!.slice(1);
    expect(err).toBe(`${[...latncy.map((l) => `${pathOf("unknown-key-latncy.yaml")}:${l}`), ...lines.map((l) => `${pathOf(name)}:${l}`)].join("\n")}\n`);
  });

  it("exits 0 on good files and says how many entries each has", async () => {
    capture();
    const code = await validate(["examples/hello.yaml", "examples/default.yaml"]);
    vi.restoreAllMocks();
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe("examples/hello.yaml: ok (1 entry in 1 list)\nexamples/default.yaml: ok (9 entries in 1 list)\n");
  });

  it("exits 1 when any one of several files is bad, and still checks the others", async () => {
    capture();
    const code = await validate(["examples/hello.yaml", pathOf("empty-file.yaml")]);
    vi.restoreAllMocks();
    expect(code).toBe(1);
    expect(out).toBe("examples/hello.yaml: ok (1 entry in 1 list)\n");
    expect(err).toBe(
      `${pathOf("empty-file.yaml")}:1:1: the script is empty (hint: a script is a mapping with \`entries:\` (a list of replies) or \`steps:\`)\n`,
    );
  });

  it("exits 2 with usage when given no files", async () => {
    capture();
    const code = await validate([]);
    vi.restoreAllMocks();
    expect(code).toBe(2);
    expect(out).toMatch(/^usage: modelstub validate FILE\.\.\./);
  });
});
