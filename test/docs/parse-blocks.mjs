// Finding the blocks of a page and the markers that say what to do with each (run-doc-blocks.mjs
// describes the markers).
import path from "node:path";

/** Languages a reader pastes into a shell or a project: such a block must say whether CI runs it. */
export const PASTED = new Set([
  "sh",
  "bash",
  "shell",
  "zsh",
  "console",
  "ts",
  "typescript",
  "tsx",
  "js",
  "javascript",
  "mjs",
  "cjs",
  "python",
  "py",
  "go",
  "rust",
  "rs",
]);
export const SHELL = new Set(["sh", "bash", "shell"]);
export const TS = new Set(["ts", "typescript"]);

// ---------------------------------------------------------------------------------------------
// Parsing

/**
 * The fenced blocks of a markdown text: {line (1-based, of the opening fence), lang, text, markers}.
 * markers are the HTML comments standing on the lines right before the fence.
 */
export function parseBlocks(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)/.exec(lines[i]);
    if (!open) continue;
    const fence = open[2];
    const body = [];
    let j = i + 1;
    const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    while (j < lines.length && !close.test(lines[j])) body.push(lines[j++]);
    const markers = [];
    for (let k = i - 1; k >= 0 && /^\s*<!--.*-->\s*$/.test(lines[k]); k--) markers.unshift(lines[k].trim());
    blocks.push({ line: i + 1, lang: open[3].toLowerCase(), text: `${body.join("\n")}\n`, markers });
    i = j;
  }
  return blocks;
}

/** What a block's markers ask: {kind: run|background|file|ts|not-run|none|bad, ...}. */
export function kindOf(block) {
  const found = [];
  for (const m of block.markers) {
    const inner = /^<!--\s*(.*?)\s*-->$/.exec(m)[1];
    let r;
    if (inner === "run") found.push({ kind: "run" });
    else if (inner === "run: background") found.push({ kind: "background" });
    else if (inner === "run: ts") found.push({ kind: "ts" });
    else if ((r = /^run: file (\S+)$/.exec(inner))) found.push({ kind: "file", name: r[1] });
    else if ((r = /^not run:\s*(.+)$/.exec(inner))) found.push({ kind: "not-run", reason: r[1] });
    else if (/^(run|not run)\b/.test(inner))
      found.push({ kind: "bad", why: `unknown marker ${m} (expected run, run: background, run: file NAME, run: ts, not run: REASON)` });
  }
  if (found.length > 1) return { kind: "bad", why: `${found.length} run markers on one block` };
  const k = found[0] ?? { kind: "none" };
  if ((k.kind === "run" || k.kind === "background") && !SHELL.has(block.lang))
    return {
      kind: "bad",
      why: `<!-- run${k.kind === "background" ? ": background" : ""} --> needs a sh or bash block, not \`${block.lang || "(no language)"}\``,
    };
  if (k.kind === "ts" && !TS.has(block.lang)) return { kind: "bad", why: `<!-- run: ts --> needs a ts block, not \`${block.lang || "(no language)"}\`` };
  if (k.kind === "file" && (path.isAbsolute(k.name) || k.name.split(/[\\/]/).includes("..")))
    return { kind: "bad", why: `run: file ${k.name}: the name must stay inside the page's folder` };
  if (k.kind === "none" && PASTED.has(block.lang))
    return {
      kind: "bad",
      why: `an unmarked \`${block.lang}\` block: mark it <!-- run -->, <!-- run: background -->, <!-- run: ts -->, <!-- run: file NAME --> or <!-- not run: REASON -->`,
    };
  return k;
}
