import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const page = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");
const src = new URL("../../src/", import.meta.url).pathname;
const rooms = readdirSync(src, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

describe("docs/architecture.md", () => {
  it("names only files that exist: every room/file.ts it mentions is in src/", () => {
    const named = [...new Set([...page.matchAll(/\b([a-z]+)\/([a-z][a-z-]*\.ts)\b/g)].filter((m) => rooms.includes(m[1]!)).map((m) => `${m[1]}/${m[2]}`))];
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((f) => !existsSync(`${src}${f}`))).toEqual([]);
  });

  it("draws every room of src/ and gives each its row of import rules", () => {
    for (const room of rooms) {
      expect(page, `src/${room} in the picture`).toContain(`src/${room}`);
      expect(page, `the row of ${room}/`).toMatch(new RegExp(`^\\| [^|]*\`${room}/\``, "m"));
    }
  });

  it("shows where a call is selected, rendered and recorded", () => {
    expect(page).toMatch(/engine\/select-entry\.ts\s+selectEntry\s+◀── SELECTED/);
    expect(page).toMatch(/engine\/render-reply\.ts\s+renderReply\s+◀── RENDERED/);
    expect(page).toMatch(/◀── RECORDED here[\s\S]*engine\/encode-episode\.ts/);
  });
});
