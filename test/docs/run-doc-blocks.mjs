#!/usr/bin/env node
// Runs the documentation: every code block a reader would paste, in README.md and docs/*.md, is
// executed against a real server, so a snippet that breaks fails CI (.ci/run.d/37-doc-blocks.sh).
//
//   node test/docs/run-doc-blocks.mjs [--list] [--keep] [PAGE.md ...]      (no pages: all of them)
//
// A block is marked by an HTML comment on the line before its fence (other comment lines, such
// as `<!-- snippet: PATH -->`, may stand between the marker and the fence):
//
//   <!-- run -->               a sh/bash block, run with bash (set -euo pipefail); must exit 0
//   <!-- run: background -->   a sh/bash block that starts a server and never returns: started in
//                              the background; the next block runs once it has printed a
//                              "listening on" line; SIGTERM at the end of the page; must exit 0
//   <!-- run: file NAME -->    any block: its text is written to NAME in the page's folder
//   <!-- run: ts -->           a ts block: type-checked with tsc --strict (module nodenext) in a
//                              project where the packed checkout (npm pack) is installed, then run
//                              with node; must exit 0
//   <!-- not run: REASON -->   a block CI does not run; REASON is printed
//
// A sh, bash, shell, console, ts, js, python, go or rust block with none of these fails the
// check, naming page and line. Other blocks (yaml, json, text, proto, ...) may be unmarked.
//
// Each page runs in order in a scratch folder of its own that stands for the root of a checkout
// (a copy of examples/ and proto/, bin/modelstub.js and a package.json naming it, so
// `npx modelstub` works as in a checkout, and node_modules/.bin/buf), kept for the whole page.
// On PATH: `modelstub` (this checkout's bin/modelstub.js, as after `npm link` or a global
// install), grpcurl (the interop suite's pinned build in .cache/bin), curl and node.
// Blocks also get MODELSTUB_DOCS_REPO (this checkout) and MODELSTUB_DOCS_TARBALL (its npm pack).
// Every block runs in a process group of its own: one that leaves a process behind fails, and
// the process is killed. Pages run one after another, so the default ports the docs show
// (127.0.0.1:50051 for gRPC, 127.0.0.1:8080 for HTTP) are free for each page's server.
//
// Each page's relative links are checked too: the file must exist, and a #anchor must be a
// heading of it (one `links` line per page).
//
// Prints one `ok`/`FAIL`/`not run` line per block (page:line), the first lines of output of a
// failure, and ends with `N passed, N failed`; exits 1 when anything failed.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runPage } from "./run-page.mjs";
import { pack, setUpTools } from "./set-up-tools.mjs";
import { keep, listOnly, pageArgs, rel, ROOT } from "./settings.mjs";
import { killGroup, live } from "./start-group.mjs";
import { dropLock, portsFree, takeLock } from "./take-lock.mjs";

// The runner is split by what each part does: settings.mjs (command line, timeouts), parse-blocks.mjs
// (blocks and markers), broken-links.mjs, take-lock.mjs (one page at a time per machine),
// start-group.mjs (running a block), set-up-tools.mjs (PATH, npm pack, the ts project) and
// run-page.mjs (one page, block by block); this file picks the pages and prints the summary.
export { anchorsOf, brokenLinks } from "./broken-links.mjs";
export { kindOf, parseBlocks } from "./parse-blocks.mjs";

// ---------------------------------------------------------------------------------------------
// Running

function pagesToRun() {
  if (pageArgs.length) return pageArgs.map((p) => path.resolve(p));
  const docs = path.join(ROOT, "docs");
  const pages = [path.join(ROOT, "README.md")];
  if (existsSync(docs))
    pages.push(
      ...readdirSync(docs)
        .filter((f) => f.endsWith(".md"))
        .sort()
        .map((f) => path.join(docs, f)),
    );
  return pages;
}

async function main() {
  const tally = { passed: 0, failed: 0, notRun: 0 };
  const tmp = mkdtempSync(path.join(tmpdir(), "modelstub-docs-"));
  let tools;
  let tarball;
  if (!listOnly) {
    tools = setUpTools(tmp);
    tarball = pack(tmp);
  } else tools = path.join(tmp, "bin");
  const stop = () => {
    // Ctrl-C or CI's kill: no page's server may outlive the runner.
    console.log("\ninterrupted");
    for (const job of live) killGroup(job.pgid, "SIGKILL");
    dropLock();
    if (!keep) rmSync(tmp, { recursive: true, force: true });
    process.exit(130);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    for (const page of pagesToRun()) {
      if (!existsSync(page)) {
        tally.failed++;
        console.log(`FAIL    ${rel(page)}: no such page`);
        continue;
      }
      console.log(`\n== ${rel(page)}`);
      if (listOnly) {
        await runPage(page, tmp, tools, tarball, tally);
        continue;
      }
      await takeLock();
      try {
        const busy = await portsFree();
        if (busy.length) console.log(`(127.0.0.1:${busy.join(", :")} still in use: this page's servers may fail to start)`);
        await runPage(page, tmp, tools, tarball, tally);
      } finally {
        dropLock();
      }
    }
  } finally {
    if (keep) console.log(`\nscratch folders kept in ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`\n${tally.notRun} block(s) not run, as marked`);
  console.log(`${tally.passed} passed, ${tally.failed} failed`);
  process.exitCode = tally.failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
