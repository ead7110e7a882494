#!/usr/bin/env bash
# Installs Debian's Chromium (/usr/bin/chromium) for the headless browser check of the matrix
# HTML report (.ci/run.d/48-matrix-html.sh). Playwright's own browser download cannot run here
# (no network but the package registries): playwright-core drives this Chromium instead. Does
# nothing when /usr/bin/chromium is there already. Needs root (CI and developers are root here).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  /usr/bin/chromium --version
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
/usr/bin/chromium --version
