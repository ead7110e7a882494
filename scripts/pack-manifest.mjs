#!/usr/bin/env node
// The package.json `npm pack` puts in the tarball: the checkout's, without the scripts that only
// serve a checkout. `prepare` (build on a git install) and `pretest`/`pretest:*` (build before the
// tests) mean nothing in an installed package, and npm 11 lists a package that declares `prepare`
// among those with install scripts to approve. package.json runs this as its prepack and
// postpack scripts (and .ci/run.d/35-package.sh around `npm pack --ignore-scripts`):
//
//   node scripts/pack-manifest.mjs strip     package.json -> .package.json.unpacked, and the packed form written
//   node scripts/pack-manifest.mjs restore   .package.json.unpacked -> package.json
//
// A strip after a pack that never restored restores first: the checkout's file is never lost.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const manifest = "package.json";
const kept = ".package.json.unpacked";

/** Whether a script is one a checkout needs and an installed package does not. */
export function checkoutOnly(name) {
  return name === "prepare" || name === "prepack" || name === "postpack" || /^pre(test|publish)(:|$)/.test(name);
}

/** The manifest as packed: the same text, key order and indentation, less the checkout-only scripts. */
export function packedManifest(text) {
  const pkg = JSON.parse(text);
  if (pkg.scripts) pkg.scripts = Object.fromEntries(Object.entries(pkg.scripts).filter(([name]) => !checkoutOnly(name)));
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

const mode = process.argv[2];
if (mode === "strip") {
  if (existsSync(kept)) renameSync(kept, manifest);
  const text = readFileSync(manifest, "utf8");
  writeFileSync(kept, text);
  writeFileSync(manifest, packedManifest(text));
} else if (mode === "restore") {
  if (existsSync(kept)) renameSync(kept, manifest);
} else if (mode !== undefined) {
  process.stderr.write(`pack-manifest: expected strip or restore, not ${JSON.stringify(mode)}\n`);
  process.exit(2);
}
