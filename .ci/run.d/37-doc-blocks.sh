#!/usr/bin/env bash
# The documentation, executed (issue 13): every block of README.md and docs/*.md that a reader
# would paste is marked, and the marked ones run against a real server (test/docs/run-doc-blocks.mjs
# says how). A snippet that breaks fails CI. Ends with the runner's "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run build --silent
# grpcurl as the interop suite pins it (cached in .cache/bin; a no-op when up to date).
if command -v go >/dev/null 2>&1; then bash test/interop/build.sh grpcurl; fi
node test/docs/run-doc-blocks.mjs
