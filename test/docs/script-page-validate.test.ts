import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { validate } from "../../src/cli/validate.js";
// @ts-expect-error -- the doc-block runner is plain .mjs, without type declarations
import { parseBlocks } from "./parse-blocks.mjs";

/*
 * docs/script.md shows what `modelstub validate` prints for its broken.yaml. The doc-block runner
 * only checks that the command exits 1; this checks that the lines shown are the lines printed.
 */

const page = readFileSync(new URL("../../docs/script.md", import.meta.url), "utf8");
const blocks = parseBlocks(page) as { lang: string; text: string; markers: string[] }[];

afterEach(() => vi.restoreAllMocks());

describe("docs/script.md, Checking scripts", () => {
  it("shows exactly the lines `modelstub validate broken.yaml` prints, every mistake of the file", async () => {
    const file = blocks.find((b) => b.markers.includes("<!-- run: file broken.yaml -->"))!;
    const shown = blocks.find((b) => b.lang === "text" && b.text.startsWith("$ modelstub validate broken.yaml\n"))!;
    const dir = mkdtempSync(join(tmpdir(), "modelstub-script-page-"));
    try {
      writeFileSync(join(dir, "broken.yaml"), file.text);
      let err = "";
      vi.spyOn(process.stdout, "write").mockImplementation(() => true);
      vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
      const code = await validate([join(dir, "broken.yaml")]);
      vi.restoreAllMocks();
      expect(code).toBe(1);
      expect(err.split(`${dir}/`).join("")).toBe(shown.text.slice("$ modelstub validate broken.yaml\n".length));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
