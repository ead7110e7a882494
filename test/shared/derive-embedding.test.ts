import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { deriveEmbedding } from "../../src/shared/derive-embedding.js";

// docs/embeddings.md specifies the derived vector for other languages to reproduce: its test
// vectors and its Python reference are checked here against the server's own function.
const page = readFileSync(new URL("../../docs/embeddings.md", import.meta.url), "utf8");

/** The rows of the page's "Test vectors" table: input, first four components, their float32 LE hex. */
function testVectorRows(): { input: string; first: number[]; hex: string }[] {
  const section = page.slice(page.indexOf("## Test vectors"), page.indexOf("## In the episode"));
  return section
    .split("\n")
    .filter((l) => /^\| `/.test(l))
    .map((l) => {
      const [input, numbers, hex] = l
        .split("|")
        .slice(1, 4)
        .map((c) => c.trim());
      return { input: /^`(.*)`/.exec(input!)![1]!, first: numbers!.split(",").map(Number), hex: hex!.replaceAll("`", "") };
    });
}

const python = /<!-- not run: the reference[^\n]*\n```python\n([\s\S]*?)```/.exec(page)![1]!;
const hasPython = spawnSync("python3", ["--version"]).status === 0;

describe("the derived embedding (docs/embeddings.md)", () => {
  it("gives the page's test vectors, as numbers and as float32 little-endian bytes", () => {
    const rows = testVectorRows();
    expect(rows.map((r) => r.input)).toEqual(["hello", "", "Résumé 🙂"]);
    for (const { input, first, hex } of rows) {
      const v = deriveEmbedding(input, 1536);
      expect(Array.from(v.slice(0, 4)), input).toEqual(first);
      expect(Buffer.from(v.buffer, 0, 16).toString("hex"), input).toBe(hex);
    }
  });

  it("is a unit vector of exactly the dimensions asked for, each normalized on its own", () => {
    for (const d of [1, 7, 8, 9, 1536, 4096]) {
      const v = deriveEmbedding("hello", d);
      expect(v).toHaveLength(d);
      expect(Math.abs(v.reduce((n, x) => n + x * x, 0) - 1)).toBeLessThan(1e-5);
    }
    expect(Array.from(deriveEmbedding("hello", 1))).toEqual([-1]);
  });

  it.runIf(hasPython)("matches the page's Python reference bit for bit, component by component", () => {
    const inputs = ["hello", "", "Résumé 🙂", "a longer text, with punctuation; and digits 0123456789"];
    const dims = [1, 3, 8, 13, 1536];
    const program = `${python}\nimport json, sys\ncases = json.load(sys.stdin)\nprint(json.dumps([[struct.pack("<%df" % d, *derive(t, d)).hex() for d in cases["dims"]] for t in cases["inputs"]]))\n`;
    const run = spawnSync("python3", ["-c", program], { input: JSON.stringify({ inputs, dims }), encoding: "utf8" });
    expect(run.stderr).toBe("");
    const fromPython = JSON.parse(run.stdout) as string[][];
    const fromTs = inputs.map((t) => dims.map((d) => Buffer.from(deriveEmbedding(t, d).buffer).toString("hex")));
    expect(fromPython).toEqual(fromTs);
  });
});
