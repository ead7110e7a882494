#!/usr/bin/env bash
# The package as a user gets it (issues 13 and 31): `npm pack`, then in a new project in a
# temporary folder outside the checkout, the tarball installed with the very commands
# docs/library.md gives (its block marked <!-- package-check: install -->, run as written beside
# the tarball), plus the fixture's pinned test tools (test/package/). There: `modelstub
# --version`, `serve` and `health`, the JSON Schema at its stable path, a strict type check of
# the tests that import the package (test/package/*.spec.ts and the vitest file of
# docs/library.md, marked <!-- package-check: file NAME -->), and those tests run by vitest.
# Also: no page tells users to install the registry name (not yet published), and the install
# from a git URL that docs/library.md describes works (git+file: of this commit, which runs
# `prepare`). Prints the packed and installed sizes (docs/library.md states them). Network: the
# npm registry only; downloads are cached in .cache/npm. Ends with its own "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
mkdir -p .cache/npm
export npm_config_cache="$root/.cache/npm" npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

passed=0
failed=0
mark=$(date +%s)
took() { local now; now=$(date +%s); spent="($((now - mark)) s)"; mark=$now; }
ok() { took; printf 'ok   %s %s\n' "$1" "$spent"; passed=$((passed + 1)); }
bad() { took; printf 'FAIL %s %s\n' "$1" "$spent"; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 30 | sed 's/^/     /'; failed=$((failed + 1)); }
finish() { printf '%s passed, %s failed\n' "$passed" "$failed"; [ "$failed" -eq 0 ]; exit $?; }

work="$(mktemp -d "${TMPDIR:-/tmp}/modelstub-package.XXXXXX")"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
case "$work/" in "$root"/*) bad "the temporary folder $work is inside the checkout"; finish ;; esac
started=$(date +%s)

# -- pack ----------------------------------------------------------------------------------
out="$(npm run build --silent 2>&1)" || { bad "npm run build" "$out"; finish; }
# The manifest as packed (scripts/pack-manifest.mjs, the prepack and postpack scripts): built
# above, so the pack runs no script but these two.
node scripts/pack-manifest.mjs strip
out="$(npm pack --ignore-scripts --json --pack-destination "$work" 2>&1)"
packed_ok=$?
node scripts/pack-manifest.mjs restore
[ "$packed_ok" -eq 0 ] || { bad "npm pack" "$out"; finish; }
read -r tarball packed unpacked entries < <(node -e 'const [r]=JSON.parse(process.argv[1]);console.log(r.filename,r.size,r.unpackedSize,r.entryCount)' "$out")
tarball="$work/$tarball"
ok "npm pack: $(basename "$tarball"), $packed bytes packed, $unpacked unpacked, $entries files"
# The budgets docs/library.md states: a file list gone wrong (tests, sources, maps) trips them.
[ "$packed" -le $((700 * 1024)) ] && ok "packed size within its 700 KiB budget" || bad "the tarball is $packed bytes, over its 700 KiB budget: check package.json \"files\""
scripts="$(tar -xzOf "$tarball" package/package.json | node -e 'let t="";process.stdin.on("data",(d)=>(t+=d)).on("end",()=>console.log(Object.keys(JSON.parse(t).scripts??{}).filter((n)=>/^(pre|post)|^prepare$/.test(n)).join(" ")))')"
[ -z "$scripts" ] && ok "the packed package.json declares no prepare, pre* or post* scripts (npm 11 lists prepare among install scripts)" || bad "the packed package.json still declares: $scripts"
listing="$(tar -tzf "$tarball")"
unwanted="$(grep -E '^package/(test|src|bench|\.ci|gen|docs)/|^package/dist/src/cli/|/(target|node_modules|__pycache__|\.venv)/|\.map$|\.test\.|\.tsbuildinfo$' <<<"$listing" || true)"
[ -z "$unwanted" ] && ok "the tarball holds no tests, sources, source maps, CLI tsc output or build output of the example clients" || bad "the tarball holds files users do not need" "$unwanted"

# -- install: the package alone, production dependencies only, for its size ------------------
mkdir -p "$work/alone" && echo '{"name":"alone","private":true}' >"$work/alone/package.json"
if out="$(cd "$work/alone" && npm install --omit=dev --prefer-offline --loglevel=error "$tarball" 2>&1)"; then
  installed=$(du -sk "$work/alone/node_modules" | cut -f1)
  ok "npm install --omit=dev of the tarball alone: node_modules is ${installed} KiB, of which modelstub $(du -sk "$work/alone/node_modules/modelstub" | cut -f1) KiB"
  [ "$installed" -le $((40 * 1024)) ] && ok "installed size within its 40 MiB budget" || bad "node_modules is ${installed} KiB, over its 40 MiB budget: a new runtime dependency?"
else
  bad "npm install --omit=dev of the tarball" "$out"
fi

# -- the fixture project -------------------------------------------------------------------
app="$work/app"
mkdir -p "$app" && cp test/package/package.json test/package/tsconfig.json "$app/"
# Without its first line, `// @ts-nocheck`: that is only for the checkout's own type check.
for f in test/package/*.spec.ts; do sed '1{/^\/\/ @ts-nocheck/d}' "$f" >"$app/$(basename "$f")"; done
# The fixture's pins are the checkout's: the same TypeScript and vitest as our own tests.
out="$(node -e '
  const root = require(process.argv[1] + "/package.json"), fx = require(process.argv[1] + "/test/package/package.json");
  const want = { ...root.dependencies, ...root.devDependencies }, off = [];
  for (const [n, v] of Object.entries({ ...fx.dependencies, ...fx.devDependencies })) if (want[n] !== v) off.push(`${n}@${v} (the checkout pins ${want[n]})`);
  if (off.length) { console.log(off.join("\n")); process.exit(1); }' "$root" 2>&1)" && ok "test/package pins the checkout's versions" || bad "test/package pins other versions than the checkout" "$out"
# The install, as docs/library.md writes it: the tarball beside package.json, then its block.
out="$(node test/package/doc-blocks.mjs install 2>&1)" || { bad "docs/library.md's install block" "$out"; finish; }
install_block="$out"
documented="$(grep -oE 'modelstub-[0-9][^ ]*\.tgz' <<<"$install_block" | head -n 1)"
[ "$documented" = "$(basename "$tarball")" ] && ok "docs/library.md installs $documented, the file npm pack made" || bad "docs/library.md installs ${documented:-no tarball}, npm pack made $(basename "$tarball"): update the docs' version"
cp "$tarball" "$app/$(basename "$tarball")"
if ! out="$(cd "$app" && npm_config_prefer_offline=true npm_config_loglevel=error bash -euo pipefail -c "$install_block" 2>&1)"; then
  bad "the install block of docs/library.md, run in the fixture project: $install_block" "$out"
  finish
fi
ok "the install block of docs/library.md ($(tr '\n' ';' <<<"$install_block")) in $app, with the fixture's test tools"
grep -q '"modelstub": "file:' "$app/package.json" && ok "package.json records modelstub as the tarball file" || bad "package.json does not record modelstub as the tarball" "$(cat "$app/package.json")"
out="$(node test/package/doc-blocks.mjs files "$app" 2>&1)" && ok "the test files of docs/library.md: $(tr '\n' ' ' <<<"$out")" || bad "the test files of docs/library.md" "$out"

# No page installs the registry name: `modelstub` is not published (E404), and whoever takes the
# name would get those installs.
registry="$(grep -rnE 'npm (install|i|add)( -[-a-zA-Z]+)* +(-g +|--global +)?modelstub(@[^ ]*)?( |$|`)' README.md docs/*.md || true)"
[ -z "$registry" ] && ok "no page installs the unpublished registry name modelstub" || bad "pages install the registry name modelstub, which is not published: install the release tarball (docs/library.md#install)" "$registry"
mb="$app/node_modules/.bin/modelstub"

# -- the CLI from the installed package ------------------------------------------------------
version="$(node -p 'require(process.argv[1]).version' "$root/package.json")"
out="$(cd "$app" && npx --no-install modelstub --version 2>&1)"
[ "$out" = "$version" ] || [ "$out" = "modelstub $version" ] && ok "npx modelstub --version: $out" || bad "npx modelstub --version printed something else than $version" "$out"

log="$work/serve.log"
(cd "$app" && exec "$mb" serve --grpc 127.0.0.1:0 --clock virtual) >"$log" 2>&1 &
serve_pid=$!
address=""
for _ in $(seq 200); do
  address="$(sed -n -e 's/^modelstub: gRPC listening on \([^ ]*\).*/\1/p' -e 's/^{"level":"info","msg":"gRPC listening","address":"\([^"]*\)".*/\1/p' "$log")"
  [ -n "$address" ] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.05
done
if [ -n "$address" ]; then
  ok "modelstub serve --grpc 127.0.0.1:0: listening on $address"
  out="$(cd "$app" && npx --no-install modelstub health --addr "$address" 2>&1)" && ok "npx modelstub health --addr $address: $out" || bad "modelstub health --addr $address" "$out"
  kill -TERM "$serve_pid"
  wait "$serve_pid"
  rc=$?
  serve_pid=""
  [ "$rc" -eq 0 ] && ok "modelstub serve shut down on SIGTERM with exit 0" || bad "modelstub serve exited $rc after SIGTERM" "$(cat "$log")"
else
  bad "modelstub serve did not say where it listens" "$(cat "$log")"
fi

schema="$app/node_modules/modelstub/modelstub.schema.json"
[ -f "$schema" ] && cmp -s "$schema" <("$mb" schema) && ok "node_modules/modelstub/modelstub.schema.json is what modelstub schema prints" || bad "node_modules/modelstub/modelstub.schema.json is missing or differs from modelstub schema"

# -- the library, type-checked and run -------------------------------------------------------
out="$(cd "$app" && npx --no-install tsc -p tsconfig.json 2>&1)" && ok "tsc (strict, no skipLibCheck) of a test importing modelstub" || bad "tsc -p tsconfig.json in the fixture project" "$out"
report="$work/vitest.json"
out="$(cd "$app" && npx --no-install vitest run --reporter=default --reporter=json --outputFile="$report" 2>&1)"
rc=$?
if [ -f "$report" ]; then
  read -r p f < <(node -e 'const r=require(process.argv[1]);console.log(r.numPassedTests, r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0))' "$report")
  passed=$((passed + p))
  failed=$((failed + f))
  took
  [ "$rc" -eq 0 ] && [ "$p" -gt 0 ] && printf 'ok   vitest in the fixture project: %s passed %s\n' "$p" "$spent" || bad "vitest in the fixture project (exit $rc)" "$out"
else
  bad "vitest in the fixture project produced no report" "$out"
fi

# -- from a git URL, as docs/library.md describes: npm clones, installs dev dependencies, runs prepare ---
commit="$(git rev-parse HEAD)"
mkdir -p "$work/git" && echo '{"name":"from-git","private":true,"type":"module"}' >"$work/git/package.json"
if out="$(cd "$work/git" && npm install --save-dev --prefer-offline --loglevel=error "git+file://$root#$commit" 2>&1)"; then
  out="$(cd "$work/git" && npx --no-install modelstub --version 2>&1 && node --input-type=module -e 'const { startServer } = await import("modelstub"); const s = await startServer({ grpc: false, clock: "virtual", script: "entries:\n  - reply: from git\n" }); const r = await s.inProcess().generate({}); await s.close(); if (r.message?.content !== "from git") throw new Error(String(r.message?.content)); console.log("library ok")' 2>&1)" \
    && ok "npm install git+file://...#${commit:0:12} (prepare builds it): $(tr '\n' ' ' <<<"$out")" || bad "the package installed from git does not work" "$out"
else
  bad "npm install git+file://$root#$commit" "$out"
fi

echo "package step took $(($(date +%s) - started)) s"
finish
