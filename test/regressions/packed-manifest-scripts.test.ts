import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain .mjs script, without type declarations
import { packedManifest } from "../../scripts/pack-manifest.mjs";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * Issue 31, item 9: the packed package.json kept `prepare` and `pretest`, so npm 11 listed
 * modelstub among packages with install scripts. prepack strips them, postpack puts the
 * checkout's package.json back (.ci/run.d/35-package.sh checks the real tarball too).
 */

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const checkout = readFileSync(join(root, "package.json"), "utf8");

describe("the packed package.json", () => {
  it("keeps every field and script of the checkout's but prepare, prepack, postpack and pretest*", () => {
    const pkg = JSON.parse(checkout) as { scripts: Record<string, string> };
    const packed = JSON.parse(packedManifest(checkout) as string) as { scripts: Record<string, string> };
    expect(Object.keys(packed.scripts).filter((n) => /^(pre|post)|^prepare$/.test(n))).toEqual([]);
    expect(packed.scripts).toEqual(Object.fromEntries(Object.entries(pkg.scripts).filter(([n]) => !/^(prepare|prepack|postpack|pretest(:.*)?)$/.test(n))));
    expect({ ...packed, scripts: undefined }).toEqual({ ...pkg, scripts: undefined });
  });

  it("is what `npm pack` writes into the tarball, and the checkout's package.json is back afterwards", { timeout: testTimeoutMs(60_000) }, async () => {
    // A copy with this checkout's manifest and scripts/, its build a no-op: `npm pack` runs the real prepack and postpack.
    const dir = mkdtempSync(join(tmpdir(), "modelstub-pack-manifest-"));
    try {
      const pkg = JSON.parse(checkout) as { scripts: Record<string, string>; files: string[] };
      pkg.scripts["prepare"] = "node -e 0";
      pkg.files = ["scripts"];
      const text = `${JSON.stringify(pkg, null, 2)}\n`;
      writeFileSync(join(dir, "package.json"), text);
      cpSync(join(root, "scripts"), join(dir, "scripts"), { recursive: true });
      const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
        cwd: dir,
        env: { ...process.env, npm_config_update_notifier: "false" },
      });
      const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf("["))) as [{ filename: string }];
      const { stdout: packedText } = await run("tar", ["-xzOf", join(dir, filename), "package/package.json"]);
      expect(JSON.parse(packedText)).toEqual(JSON.parse(packedManifest(text) as string));
      expect(readFileSync(join(dir, "package.json"), "utf8")).toBe(text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
