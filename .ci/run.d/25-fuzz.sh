#!/usr/bin/env bash
# The fuzz suite (issue 12): random and mutated wire bytes, random requests, mutated scripts
# through validate and LoadScript, stalled readers and reset bursts, each batch followed by a
# good call and an RSS/fd check of the server (a child process). Seeded: the default seed unless
# MODELSTUB_FUZZ_SEED is set; every failure names its seed and case (test/fuzz/README.md).
# Then the isolation check (issue 27): a bystander session beside each hostile attack
# (test/fuzz/bystander.test.ts), on its own: it times the bystander's calls, and another fuzz file
# beside it (its own server hammered by bursts) took the core they need. (The loop's stretch is
# bounded in its own CPU time, which no neighbour inflates; the bystander's p99 is wall time.)
# Ends with its own "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .cache

fuzz=.cache/fuzz.json
isolation=.cache/fuzz-isolation.json
rm -f "$fuzz" "$isolation"
npm run build >/dev/null || { echo "CI: build failed"; echo "0 passed, 1 failed"; exit 1; }
npx vitest run --config vitest.fuzz.config.ts --exclude test/fuzz/bystander.test.ts --reporter=default --reporter=json --outputFile="$fuzz"
rc=$?
npx vitest run --config vitest.fuzz.config.ts test/fuzz/bystander.test.ts --reporter=default --reporter=json --outputFile="$isolation"
irc=$?
[ "$rc" -eq 0 ] && rc=$irc

[ -f "$fuzz" ] && [ -f "$isolation" ] || { echo "CI: the fuzz run produced no report"; echo "0 passed, 1 failed"; exit 1; }
node -e 'let p=0,f=0;for(const a of process.argv.slice(1)){const r=require(require("path").resolve(a));p+=r.numPassedTests;f+=r.numFailedTests+(r.numRuntimeErrorTestSuites ?? 0)}console.log(`${p} passed, ${f} failed`)' "$fuzz" "$isolation"
exit "$rc"
