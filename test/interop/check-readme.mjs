// Checks that the README's interop examples are the files the suite builds and runs: every
// `<!-- snippet: PATH -->` line in README.md's section:interop must be followed by a fenced code
// block whose text equals PATH (relative to the repository root), and every file in SNIPPETS
// must be shown. Prints ok/FAIL lines; exits 1 on a failure.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const SNIPPETS = [
  "test/interop/go/buf.gen.yaml",
  "test/interop/go/snippet/main.go",
  "test/interop/python/generate.sh",
  "test/interop/python/snippet.py",
  "test/interop/rust/build.rs",
  "test/interop/rust/src/bin/snippet.rs",
  "buf.gen.yaml",
  "test/interop/ts/snippet.ts",
];

const readme = readFileSync(`${root}README.md`, "utf8");
const section = /<!-- section:interop -->([\s\S]*?)<!-- \/section:interop -->/.exec(readme)?.[1] ?? "";
const shown = new Map();
for (const m of section.matchAll(/<!-- snippet: (\S+) -->\n```[^\n]*\n([\s\S]*?)```\n/g)) shown.set(m[1], m[2]);

let failed = 0;
for (const path of SNIPPETS) {
  const block = shown.get(path);
  const file = readFileSync(`${root}${path}`, "utf8");
  if (block === undefined) {
    failed++;
    console.log(`FAIL README: ${path} is not shown in section:interop (a "<!-- snippet: ${path} -->" line before a fenced block)`);
  } else if (block.trimEnd() !== file.trimEnd()) {
    failed++;
    const a = block.split("\n"), b = file.split("\n");
    const i = a.findIndex((line, n) => line !== b[n]);
    console.log(`FAIL README: the block for ${path} differs from the file at line ${i + 1}:\n     README: ${a[i]}\n     file:   ${b[i]}`);
  } else {
    console.log(`ok   README: the block for ${path} is the file`);
  }
}
for (const path of shown.keys()) {
  if (!SNIPPETS.includes(path)) {
    failed++;
    console.log(`FAIL README: snippet ${path} is not in check-readme.mjs's list, so nothing runs it`);
  }
}
process.exitCode = failed ? 1 : 0;
