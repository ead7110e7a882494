#!/usr/bin/env bash
# Installs the bench's pinned tools (all git-ignored, under .cache/): ghz and GripMock with
# `go install` into .cache/bin, mock-llm with npm into .cache/peers/mock-llm. Each is optional:
# when one cannot be installed, `node bench/run.mjs` falls back (ghz -> the Node load generator)
# or skips it (GripMock, mock-llm) and says so in its output; this script reports the failure
# and exits 1 at the end.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
export GOBIN="$here/.cache/bin" GOMODCACHE="$here/.cache/gomod" GOCACHE="$here/.cache/gocache" GOFLAGS=-modcacherw
mkdir -p "$GOBIN"
ghz_version=v0.120.0
gripmock_version=v3.9.0
mock_llm_version=0.1.29 # pinned in lib/tools.mjs too
status=0
if command -v go >/dev/null; then
  [ -x "$GOBIN/ghz" ] || go install "github.com/bojand/ghz/cmd/ghz@$ghz_version" || { echo "install-tools: ghz $ghz_version failed" >&2; status=1; }
  [ -x "$GOBIN/gripmock" ] || go install "github.com/bavix/gripmock/v3@$gripmock_version" || { echo "install-tools: gripmock $gripmock_version failed (where the module proxy refuses it, build it from source: bench/peer/build-gripmock.sh)" >&2; status=1; }
else
  echo "install-tools: no go on PATH: ghz and GripMock skipped" >&2
  status=1
fi
# mock-llm: the HTTP peer (an OpenAI-compatible mock LLM server), stands in for GripMock.
peer="$here/.cache/peers/mock-llm"
installed="$(node -p "require('$peer/node_modules/@dwmkerr/mock-llm/package.json').version" 2>/dev/null || true)"
if [ "$installed" != "$mock_llm_version" ]; then
  if ! command -v npm >/dev/null; then
    echo "install-tools: no npm on PATH: mock-llm skipped" >&2
    status=1
  else
    mkdir -p "$peer"
    npm install --prefix "$peer" --no-audit --no-fund "@dwmkerr/mock-llm@$mock_llm_version" || { echo "install-tools: mock-llm $mock_llm_version failed" >&2; status=1; }
  fi
fi
exit $status
