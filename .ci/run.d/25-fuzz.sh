#!/usr/bin/env bash
# The fuzz suite (issue 12): random and mutated wire bytes, random requests, mutated scripts
# through validate and LoadScript, stalled readers and reset bursts, each batch followed by a
# good call and an RSS/fd check of the server (a child process). Seeded: the default seed unless
# MODELSTUB_FUZZ_SEED is set; every failure names its seed and case (test/fuzz/README.md).
# And the isolation check (issue 27): a bystander session beside each hostile attack
# (test/fuzz/bystander.test.ts, most of the step's few minutes on 2 cores). Ends with its own
# "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .cache

report=.cache/fuzz.json
rm -f "$report"
npm run build >/dev/null || { echo "CI: build failed"; echo "0 passed, 1 failed"; exit 1; }
npx vitest run --config vitest.fuzz.config.ts --reporter=default --reporter=json --outputFile="$report"
rc=$?

[ -f "$report" ] || { echo "CI: the fuzz run produced no report"; echo "0 passed, 1 failed"; exit 1; }
node -e 'const r=require(require("path").resolve(process.argv[1]));console.log(`${r.numPassedTests} passed, ${r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0)} failed`)' "$report"
exit "$rc"
