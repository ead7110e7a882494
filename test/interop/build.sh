#!/usr/bin/env bash
# Builds the interop executors (Go, Python, Rust, TypeScript) that drive a modelstub server
# through the same scenario, and a pinned grpcurl. (docs/clients.md's projects are built by
# snippets.sh, with the page's own commands, in these caches.) Usage:
#
#   test/interop/build.sh [--force] [go] [python] [rust] [ts] [grpcurl]   (none named: all)
#
# Outputs (all git-ignored):
#   test/interop/.build/bin/executor-{go,python,rust,ts}   wrappers to run
#   .cache/bin/grpcurl           grpcurl $GRPCURL_VERSION, by go install
#   test/interop/.build/go/      protoc plugins, generated Go code, the Go binary
#   test/interop/.build/python/  generated Python stubs
#   .cache/interop/              Go build and module caches, the Python venv, Cargo's target dir
#
# A step whose inputs (sources, protos, pinned versions, toolchain version) have not changed
# since its last successful build is skipped. --force rebuilds anyway.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="$HERE/.build"
CACHE="$ROOT/.cache/interop"
PROTO="$ROOT/proto"
VENV="$CACHE/venv"
export CARGO_TARGET_DIR="$CACHE/cargo-target"

FORCE=0
LANGS=()
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    go|python|rust|ts|grpcurl) LANGS+=("$arg") ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument '$arg' (expected --force, go, python, rust, ts, grpcurl)" >&2; exit 2 ;;
  esac
done
[ ${#LANGS[@]} -eq 0 ] && LANGS=(python go rust ts grpcurl)
# grpcurl as users install it: go install of a pinned release.
GRPCURL_VERSION=v1.9.4

mkdir -p "$BUILD/bin" "$CACHE"
rm -f "$BUILD"/bin/snippet-*   # the README snippets' wrappers, before docs/clients.md replaced them

die() { echo "interop build: $*" >&2; exit 1; }
now_ms() { date +%s%3N; }
need() { # need TOOL MESSAGE
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"
}

# stamp_of LABEL FILE... : a hash of the files' names and contents plus extra text in $EXTRA.
stamp_of() {
  local f
  {
    printf '%s\n' "${EXTRA:-}"
    for f in "$@"; do printf '== %s\n' "${f#"$ROOT"/}"; cat "$f"; done
  } | sha256sum | cut -d' ' -f1
}
fresh() { # fresh STAMPFILE HASH OUTPUT... : true when the stamp matches and every output exists
  local stamp="$1" hash="$2"; shift 2
  [ "$FORCE" = 0 ] || return 1
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] || return 1
  local o; for o in "$@"; do [ -e "$o" ] || return 1; done
}
protos() { find "$PROTO" -name '*.proto' | LC_ALL=C sort; }

wrapper() { # wrapper NAME COMMAND...
  local w="$BUILD/bin/$1"; shift
  { echo '#!/bin/sh'; printf 'exec'; printf ' %q' "$@"; echo ' "$@"'; } > "$w"
  chmod +x "$w"
}

build_python() {
  need python3 "install Python 3.9+ (with the venv module) to run the interop suite"
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' \
    || die "python3 is $(python3 --version 2>&1): the interop suite needs Python 3.9+"
  python3 -c 'import venv, ensurepip' 2>/dev/null \
    || die "python3 has no venv/ensurepip module: install python3-venv to run the interop suite"
  local hash out="$BUILD/python/gen"
  EXTRA="$(python3 --version 2>&1)" hash="$(stamp_of "$HERE/python/requirements.txt" $(protos))"
  if fresh "$BUILD/python/stamp" "$hash" "$VENV/bin/python" "$out/modelstub/v1/model_pb2_grpc.py"; then
    echo "python: up to date"; return
  fi
  local venv_stamp
  venv_stamp="$(EXTRA="$(python3 --version 2>&1)" stamp_of "$HERE/python/requirements.txt")"
  if [ "$FORCE" = 1 ] || [ ! -x "$VENV/bin/python" ] || [ "$(cat "$CACHE/venv.stamp" 2>/dev/null)" != "$venv_stamp" ]; then
    echo "python: creating $VENV from python/requirements.txt"
    rm -rf "$VENV" "$CACHE/venv.stamp"
    python3 -m venv "$VENV" || die "python3 -m venv failed"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-input \
      -r "$HERE/python/requirements.txt" || die "pip install of python/requirements.txt failed"
    echo "$venv_stamp" > "$CACHE/venv.stamp"
  fi
  echo "python: generating stubs"
  rm -rf "$out"; mkdir -p "$out"
  "$VENV/bin/python" -m grpc_tools.protoc -I "$PROTO" --python_out="$out" --grpc_python_out="$out" \
    $(protos) || die "grpc_tools.protoc failed"
  "$VENV/bin/python" -c "import sys; sys.path.insert(0, '$out'); from modelstub.v1 import control_pb2_grpc, model_pb2_grpc, episode_pb2" \
    || die "generated Python stubs do not import"
  wrapper executor-python "$VENV/bin/python" "$HERE/python/executor.py"
  echo "$hash" > "$BUILD/python/stamp"
}

build_go() {
  need go "install Go 1.26+ to run the interop suite (grpc-go 1.85 needs Go 1.26)"
  local gov; gov="$(go env GOVERSION)"
  case "$gov" in
    go1.2[6-9]*|go1.[3-9][0-9]*|go[2-9]*) ;;
    *) die "go is $gov: the interop suite needs Go 1.26+ (grpc-go 1.85 needs it)" ;;
  esac
  export GOCACHE="${GOCACHE_INTEROP:-$CACHE/gocache}"
  export GOMODCACHE="${GOMODCACHE_INTEROP:-$CACHE/gomod}"
  export GOFLAGS="$(go env GOFLAGS) -modcacherw"
  local out="$BUILD/go" hash buf="$ROOT/node_modules/.bin/buf"
  EXTRA="$gov $( [ -x "$buf" ] && "$buf" --version)" \
    hash="$(stamp_of "$HERE"/go/go.mod "$HERE"/go/go.sum "$HERE"/go/gen.go.mod "$HERE"/go/buf.gen.yaml "$HERE"/go/*.go $(protos))"
  if fresh "$out/stamp" "$hash" "$out/bin/executor"; then
    echo "go: up to date"; return
  fi
  mkdir -p "$out/bin" "$out/gen"
  # The generated package is its own module, replaced into go.mod from ../.build/go/gen.
  cp "$HERE/go/gen.go.mod" "$out/gen/go.mod"
  echo "go: building protoc-gen-go and protoc-gen-go-grpc (versions pinned in go/go.mod)"
  (cd "$HERE/go" && go build -trimpath -o "$out/bin/" \
      google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc) \
    || die "building the Go protoc plugins failed"
  echo "go: generating code"
  rm -rf "$out/gen/modelstub"
  if [ -x "$buf" ]; then
    (cd "$ROOT" && PATH="$out/bin:$PATH" "$buf" generate --template test/interop/go/buf.gen.yaml) \
      || die "buf generate for Go failed"
  elif [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import grpc_tools' 2>/dev/null; then
    # No node_modules: use the protoc inside the interop venv's grpcio-tools instead.
    local m="" f rel
    for f in $(protos); do rel="${f#"$PROTO"/}"; m="$m,M$rel=modelstub.local/interop/gen/$(dirname "$rel")"; done
    "$VENV/bin/python" -m grpc_tools.protoc -I "$PROTO" \
      --plugin=protoc-gen-go="$out/bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$out/bin/protoc-gen-go-grpc" \
      --go_out="$out/gen" --go_opt="module=modelstub.local/interop/gen$m" \
      --go-grpc_out="$out/gen" --go-grpc_opt="module=modelstub.local/interop/gen$m" \
      $(protos) || die "protoc (grpcio-tools) for Go failed"
  else
    die "buf not found: run 'npm ci' at the repository root (buf comes from @bufbuild/buf), or build the python executor first (its grpcio-tools protoc is the fallback)"
  fi
  echo "go: building executor"
  (cd "$HERE/go" && go build -trimpath -buildvcs=false -o "$out/bin/executor" .) || die "go build of the executor failed"
  wrapper executor-go "$out/bin/executor"
  echo "$hash" > "$out/stamp"
}

build_rust() {
  need cargo "install Rust 1.88+ (rustup) to run the interop suite"
  local rv; rv="$(rustc --version 2>/dev/null || true)"
  local hash out="$BUILD/rust" bin="$CARGO_TARGET_DIR/release/executor"
  EXTRA="$rv $(cargo --version)" \
    hash="$(stamp_of "$HERE"/rust/Cargo.toml "$HERE"/rust/Cargo.lock "$HERE"/rust/build.rs $(find "$HERE/rust/src" -type f | LC_ALL=C sort) $(protos))"
  if fresh "$out/stamp" "$hash" "$bin"; then
    echo "rust: up to date"; return
  fi
  mkdir -p "$out"
  echo "rust: cargo build --release --locked (target dir $CARGO_TARGET_DIR)"
  (cd "$HERE/rust" && cargo build --release --locked ${CARGO_BUILD_JOBS:+-j "$CARGO_BUILD_JOBS"}) \
    || die "cargo build of the Rust executor failed"
  wrapper executor-rust "$bin"
  echo "$hash" > "$out/stamp"
}

build_ts() {
  need node "install Node 20+ to run the interop suite"
  [ -f "$ROOT/dist/src/port/grpc-port.js" ] \
    || die "no built TypeScript port in dist/: run 'npm ci' (or 'npm run build') at the repository root"
  wrapper executor-ts node "$HERE/ts/executor.mjs"
  rm -rf "$BUILD/ts"   # the compiled README snippet, before docs/clients.md replaced it
  echo "ts: executor-ts runs ts/executor.mjs on dist/ (nothing to compile)"
}

build_grpcurl() {
  need go "install Go 1.26+ to run the interop suite (grpcurl is installed with go install)"
  local gobin="$ROOT/.cache/bin" hash
  hash="$(go env GOVERSION) grpcurl $GRPCURL_VERSION"
  if [ "$FORCE" = 0 ] && [ -x "$gobin/grpcurl" ] && [ "$(cat "$gobin/grpcurl.stamp" 2>/dev/null)" = "$hash" ]; then
    echo "grpcurl: $GRPCURL_VERSION up to date"; return
  fi
  echo "grpcurl: go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
  mkdir -p "$gobin"
  (export GOCACHE="${GOCACHE_INTEROP:-$CACHE/gocache}" GOMODCACHE="${GOMODCACHE_INTEROP:-$CACHE/gomod}" GOBIN="$gobin" \
     GOFLAGS="$(go env GOFLAGS) -modcacherw"
   go install -trimpath -ldflags "-X main.version=$GRPCURL_VERSION" \
     "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION") || die "go install of grpcurl $GRPCURL_VERSION failed"
  echo "$hash" > "$gobin/grpcurl.stamp"
}

total_start="$(now_ms)"
for lang in "${LANGS[@]}"; do
  t0="$(now_ms)"
  "build_$lang"
  echo "$lang: done in $(( ($(now_ms) - t0) ))ms"
done
echo "interop build: ${LANGS[*]} ready in $(( $(now_ms) - total_start ))ms; run $BUILD/bin/executor-{go,python,rust,ts}"
