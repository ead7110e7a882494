import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadFaultPlan, loadScript } from "../../src/index.js";
import { chaosDraws, chaosKey } from "../../src/shared/chaos-draw.js";
import { parseExpectations } from "../../src/matrix/expectations.js";
// @ts-expect-error -- the doc-block runner is plain .mjs, without type declarations
import { parseBlocks } from "./parse-blocks.mjs";

/*
 * docs/faults.md, checked beyond what the doc-block runner does (it runs the sh and ts blocks,
 * and only writes yaml blocks to files): every yaml block is a fault plan or a script, and it
 * compiles; the PRNG vector table computes; the contents list every section. A plan block that
 * stopped compiling would teach a format the loader refuses.
 */

const root = new URL("../../", import.meta.url);
const page = readFileSync(new URL("docs/faults.md", root), "utf8");
const blocks = (parseBlocks(page) as { line: number; lang: string; text: string }[]).filter((b) => b.lang === "yaml" || b.lang === "yml");

/** A plan has `rules:` or `chaos:` at its top level; a script has `entries:` or `steps:`; a `matrix run --expect` file has `kinds:` or `plans:`. */
function kindOf(text: string): "plan" | "script" | "expect" | "neither" {
  const top = parse(text) as Record<string, unknown> | null;
  if (top === null || typeof top !== "object") return "neither";
  if ("rules" in top || "chaos" in top) return "plan";
  if ("entries" in top || "steps" in top) return "script";
  if ("kinds" in top || "plans" in top) return "expect";
  return "neither";
}

describe("docs/faults.md", () => {
  it("has yaml blocks of both kinds, and each is a fault plan or a script", () => {
    const kinds = blocks.map((b) => [b.line, kindOf(b.text)] as const);
    expect(kinds.filter(([, k]) => k === "neither")).toEqual([]);
    expect(kinds.filter(([, k]) => k === "plan").length).toBeGreaterThanOrEqual(4);
    expect(kinds.filter(([, k]) => k === "script").length).toBeGreaterThanOrEqual(2);
  });

  it.each(blocks.filter((b) => kindOf(b.text) === "plan").map((b) => [b.line, b.text] as const))(
    "compiles the fault plan at line %i with loadFaultPlan",
    (line, text) => {
      const plan = loadFaultPlan(text, `docs/faults.md:${line}`);
      expect(plan.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(plan.rules.length > 0 || plan.chaos !== undefined).toBe(true);
    },
  );

  it.each(blocks.filter((b) => kindOf(b.text) === "script").map((b) => [b.line, b.text] as const))(
    "compiles the script at line %i with loadScript",
    (line, text) => {
      expect(loadScript(text, `docs/faults.md:${line}`).entryCount).toBeGreaterThan(0);
    },
  );

  it.each(blocks.filter((b) => kindOf(b.text) === "expect").map((b) => [b.line, b.text] as const))("parses the expectations file at line %i", (line, text) => {
    expect(Object.keys(parseExpectations(text, `docs/faults.md:${line}`)).length).toBeGreaterThan(0);
  });

  it("shows a script whose faults: section compiles into its plan", () => {
    const withFaults = blocks.filter((b) => kindOf(b.text) === "script").filter((b) => loadScript(b.text, "faults.md").faults !== undefined);
    expect(withFaults.length).toBeGreaterThanOrEqual(1);
  });

  it("gives PRNG test vectors that the implementation computes, one row each", () => {
    const section = /<!-- section:chaos-vectors -->([\s\S]*?)<!-- \/section:chaos-vectors -->/.exec(page)?.[1] ?? "";
    const rows = section.split("\n").filter((l) => /^\| \d/.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(14);
    for (const row of rows) {
      const cells = row
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim().replace(/^`(.*)`$/, "$1"));
      const [seed, session, sequence, step, errors, key, roll, pick] = cells as [string, string, string, string, string, string, string, string];
      expect(`0x${chaosKey(BigInt(seed), session, Number(sequence), step).toString(16).padStart(16, "0")}`, row).toBe(key);
      expect(chaosDraws(BigInt(seed), session, Number(sequence), step, Number(errors)), row).toEqual({ roll: Number(roll), pick: Number(pick) });
    }
  });

  it("lists every ## and ### heading in its contents, in order", () => {
    const toc = page.slice(page.indexOf("<!-- toc -->"), page.indexOf("<!-- /toc -->"));
    const headings = [...page.slice(page.indexOf("<!-- /toc -->")).matchAll(/^(##+) (.+)$/gm)].map((m) => m[2]!);
    const listed = [...toc.matchAll(/^\s*- \[(.+?)\]\(#[^)]+\)$/gm)].map((m) => m[1]!);
    expect(listed).toEqual(headings);
  });
});

describe("the pages that point at docs/faults.md", () => {
  const read = (p: string) => readFileSync(new URL(p, root), "utf8");

  it("are linked from README.md, docs/README.md, script.md, cli.md, library.md and episodes.md", () => {
    for (const p of ["README.md"]) expect(read(p)).toContain("(docs/faults.md)");
    for (const p of ["docs/README.md", "docs/script.md", "docs/library.md", "docs/episodes.md", "docs/cli.md"]) expect(read(p), p).toContain("(faults.md");
  });

  it("document the fault plan exports of the library and the CLI command", () => {
    const library = read("docs/library.md");
    for (const name of ["setFaultPlan", "loadFaultPlan", "loadFaultPlanFile", "FaultPlanObject", "FaultPlanSource", "CompiledFaultPlan"])
      expect(library).toContain(`\`${name}`);
    expect(read("docs/cli.md")).toContain("`session faults SESSION FILE`");
    expect(read("docs/episodes.md")).toContain("`SetFaultPlan {session, plan, source_name}`");
  });
});
