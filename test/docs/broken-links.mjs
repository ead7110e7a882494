import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

// ---------------------------------------------------------------------------------------------
// Links: a page's relative links must reach a file, and a `#anchor` a heading of that page.

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");

/** The anchors of a markdown file's headings (a repeated heading gets -1, -2, ...). */
export function anchorsOf(markdown) {
  const seen = new Map();
  const anchors = new Set();
  let fence = null;
  for (const line of markdown.split("\n")) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1];
      else if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, "") === "") fence = null;
      continue;
    }
    if (fence !== null) continue;
    const h = /^#{1,6} (.*)$/.exec(line);
    if (!h) continue;
    const s = slug(h[1]);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    anchors.add(n ? `${s}-${n}` : s);
  }
  for (const m of markdown.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

/** The broken relative links of a page: ["target: why", ...]. */
export function brokenLinks(page, markdown) {
  const broken = [];
  const withoutCode = markdown.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ {0,3}\1[`~]*\s*$/gm, "").replace(/`[^`\n]*`/g, "");
  for (const m of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [file, anchor] = target.split("#");
    const resolved = file ? path.resolve(path.dirname(page), decodeURIComponent(file)) : page;
    if (file && !existsSync(resolved)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor && resolved.endsWith(".md") && !anchorsOf(readFileSync(resolved, "utf8")).has(anchor)) broken.push(`${target}: no heading with that anchor`);
  }
  return broken;
}
