#!/usr/bin/env bash
# Installs the bench's pinned Go tools into .cache/bin (git-ignored). Each is optional: when one
# cannot be installed, `node bench/run.mjs` falls back (ghz -> the Node load generator) or skips
# (GripMock) and says so in its output.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
export GOBIN="$here/.cache/bin" GOMODCACHE="$here/.cache/gomod" GOCACHE="$here/.cache/gocache" GOFLAGS=-modcacherw
mkdir -p "$GOBIN"
ghz_version=v0.120.0
gripmock_version=v3.9.0
status=0
if ! command -v go >/dev/null; then echo "install-tools: no go on PATH" >&2; exit 1; fi
[ -x "$GOBIN/ghz" ] || go install "github.com/bojand/ghz/cmd/ghz@$ghz_version" || { echo "install-tools: ghz $ghz_version failed" >&2; status=1; }
[ -x "$GOBIN/gripmock" ] || go install "github.com/bavix/gripmock/v3@$gripmock_version" || { echo "install-tools: gripmock $gripmock_version failed" >&2; status=1; }
exit $status
