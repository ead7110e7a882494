#!/usr/bin/env bash
# Builds the example executors of examples/executors/ (Python, Go, Rust) with the interop
# suite's caches, and writes a wrapper for each. Usage:
#
#   test/executors/build.sh [python] [go] [rust]        (none named: all three)
#
# Outputs (git-ignored): .cache/executors/bin/executor-{python,go,rust}, the generated code in
# examples/executors/{python,go}/gen/. Shared with test/interop/build.sh: the Python venv
# (.cache/interop/venv, same pins; made by `build.sh python` there when missing), the Go build and
# module caches and Cargo's target dir (.cache/interop/), so after the interop step only the
# executors themselves compile.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
EX="$ROOT/examples/executors"
CACHE="$ROOT/.cache/interop"
BIN="$ROOT/.cache/executors/bin"
mkdir -p "$BIN"

LANGS=("$@")
[ ${#LANGS[@]} -eq 0 ] && LANGS=(python go rust)

die() { echo "executors build: $*" >&2; exit 1; }
wrapper() { # wrapper NAME COMMAND...
  local w="$BIN/$1"; shift
  { echo '#!/bin/sh'; printf 'exec'; printf ' %q' "$@"; echo ' "$@"'; } > "$w"
  chmod +x "$w"
}

build_python() {
  cmp -s "$EX/python/requirements.txt" "$ROOT/test/interop/python/requirements.txt" \
    || die "examples/executors/python/requirements.txt must pin what test/interop/python/requirements.txt pins (they share a venv)"
  "$ROOT/test/interop/build.sh" python >/dev/null || die "the interop venv (test/interop/build.sh python) failed"
  rm -rf "$EX/python/gen"; mkdir -p "$EX/python/gen"
  (cd "$EX/python" && "$CACHE/venv/bin/python" -m grpc_tools.protoc -I ../../../proto --python_out=gen --grpc_python_out=gen \
    ../../../proto/modelstub/v1/*.proto) || die "grpc_tools.protoc failed"
  wrapper executor-python "$CACHE/venv/bin/python" "$EX/python/executor.py"
}

build_go() {
  command -v go >/dev/null || die "go not found: install Go 1.26+"
  export GOCACHE="$CACHE/gocache" GOMODCACHE="$CACHE/gomod" GOFLAGS="$(go env GOFLAGS) -modcacherw"
  [ -x "$ROOT/node_modules/.bin/buf" ] || die "buf not found: run 'npm ci' at the repository root"
  (cd "$EX/go" && PATH="$ROOT/node_modules/.bin:$PATH" buf generate) || die "buf generate failed"
  (cd "$EX/go" && go build -trimpath -buildvcs=false -o "$BIN/agent-executor-go" .) || die "go build failed"
  wrapper executor-go "$BIN/agent-executor-go"
}

build_rust() {
  command -v cargo >/dev/null || die "cargo not found: install Rust 1.88+"
  export CARGO_TARGET_DIR="$CACHE/cargo-target"
  (cd "$EX/rust" && cargo build --release --locked -q ${CARGO_BUILD_JOBS:+-j "$CARGO_BUILD_JOBS"}) || die "cargo build failed"
  wrapper executor-rust "$CARGO_TARGET_DIR/release/agent-executor"
}

for lang in "${LANGS[@]}"; do
  case "$lang" in
    python|go|rust) t0="$(date +%s%3N)"; "build_$lang"; echo "executors build: $lang ready in $(( $(date +%s%3N) - t0 )) ms" ;;
    *) die "unknown language '$lang' (python, go, rust)" ;;
  esac
done
