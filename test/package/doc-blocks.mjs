#!/usr/bin/env node
// The blocks of docs/library.md that .ci/run.d/35-package.sh runs in its fresh project, so the
// project is set up exactly as the docs tell a user (issue 31): a block marked
// `<!-- package-check: install -->` is printed (the install commands, run with bash there), and a
// block marked `<!-- package-check: file NAME -->` is written to NAME in the folder given.
//
//   node test/package/doc-blocks.mjs install                 prints the install block
//   node test/package/doc-blocks.mjs files DIR               writes the file blocks into DIR, prints their names
//
// Fails (exit 1, with the page and what is missing) when docs/library.md has no install block or
// no file block: the check would otherwise pass without the docs.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseBlocks } from "../docs/parse-blocks.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const page = "docs/library.md";
const blocks = parseBlocks(readFileSync(path.join(root, page), "utf8"));
const marked = (re) =>
  blocks.flatMap((b) =>
    b.markers
      .map((m) => re.exec(m))
      .filter(Boolean)
      .map((m) => ({ block: b, match: m })),
  );

const [what, dir] = process.argv.slice(2);
if (what === "install") {
  const found = marked(/^<!--\s*package-check:\s*install\s*-->$/);
  if (found.length !== 1) {
    console.error(`${page}: expected one block marked <!-- package-check: install -->, found ${found.length}`);
    process.exit(1);
  }
  process.stdout.write(found[0].block.text);
} else if (what === "files" && dir) {
  const found = marked(/^<!--\s*package-check:\s*file\s+([\w.-]+)\s*-->$/);
  if (found.length === 0) {
    console.error(`${page}: no block marked <!-- package-check: file NAME -->`);
    process.exit(1);
  }
  for (const { block, match } of found) {
    writeFileSync(path.join(dir, match[1]), block.text);
    console.log(`${match[1]} (${page}:${block.line})`);
  }
} else {
  console.error("usage: doc-blocks.mjs install | files DIR");
  process.exit(2);
}
