#!/usr/bin/env bash
# Issue 30, item 4: the matrix HTML report in a real headless browser. Installs Debian's
# Chromium when missing (scripts/install-chromium.sh), builds dist/, then
# test/matrix/matrix-html-browser.mjs opens the report of test/matrix/fixtures/ with
# playwright-core: the grid renders coloured by verdict, clicking a cell draws its timeline
# (retry, fault, crash and restart, the diff against the clean run), no request, no error; the
# screenshot goes to .cache/matrix-report.png (docs/matrix-report.png is the committed one:
# `node test/matrix/matrix-html-browser.mjs --screenshot docs/matrix-report.png`).
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
die() { echo "FAIL $*"; echo "0 passed, 1 failed"; exit 1; }
scripts/install-chromium.sh || die "installing chromium (scripts/install-chromium.sh)"
flock /tmp/modelstub-build.lock npm run build >/dev/null || die "npm run build"
node test/matrix/matrix-html-browser.mjs --screenshot .cache/matrix-report.png
