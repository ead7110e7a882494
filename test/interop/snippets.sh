#!/usr/bin/env bash
# Runs docs/clients.md: the client projects in examples/clients/{go,python,rust,typescript}, with
# the commands the page shows, against the server command the page shows; then checks the page
# against the files (check-docs.mjs).
#
#   test/interop/snippets.sh          (build.sh first for the caches' sake; needs a built server)
#
# The commands come from the page itself (check-docs.mjs --extract): the server's block runs as
# written, with MODELSTUB_GRPC=127.0.0.1:0 and `modelstub` on PATH; each project's files and the
# repository's proto/ are copied into .cache/interop/clients/<project>/ (whose .venv/ and
# node_modules/ are kept between runs; everything else is replaced), and the project's block
# runs there with bash -euo pipefail and MODELSTUB_GRPC=<the server's address>, the four at once.
# The last two lines each prints must be the page's output block for it.
#
# Prints "N passed, N failed"; exits 1 on a failure.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="$ROOT/.cache/interop"
PROJECTS=(go python rust typescript)
source "$HERE/lib.sh"
interop_setup snippets
now_ms() { date +%s%3N; }

finish() {
  while IFS= read -r line; do
    case "$line" in
      "ok   "*) passed=$((passed + 1)) ;;
      "FAIL "*) failed=$((failed + 1)) ;;
    esac
    echo "$line"
  done < <(node "$HERE/check-docs.mjs" 2>&1 || echo "FAIL docs: check-docs.mjs exited non-zero")
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

if ! node "$HERE/check-docs.mjs" --extract "$WORK/blocks" > "$WORK/extract.log" 2>&1; then
  bad "docs/clients.md: cannot take the commands from the page:"; indent < "$WORK/extract.log"
  finish
fi

# `modelstub` on PATH is this checkout's CLI; buf (for the Go project) is the root's @bufbuild/buf.
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexec node %q "$@"\n' "$ROOT/bin/modelstub.js" > "$WORK/bin/modelstub"
chmod +x "$WORK/bin/modelstub"
[ -x "$ROOT/node_modules/.bin/buf" ] && ln -s "$ROOT/node_modules/.bin/buf" "$WORK/bin/buf"
export PATH="$WORK/bin:$PATH"
# The caches build.sh uses: Go's module and build caches (with -trimpath, as build.sh builds, so
# grpc-go and the protoc plugins compiled for the Go executor serve here too), Cargo's target dir
# (shared with the Rust executor: same crates, features and profile), npm's own cache, preferred
# to the registry, and pip's.
export GOCACHE="${GOCACHE_INTEROP:-$CACHE/gocache}" GOMODCACHE="${GOMODCACHE_INTEROP:-$CACHE/gomod}"
export GOFLAGS="$(go env GOFLAGS 2>/dev/null) -modcacherw -trimpath"
export CARGO_TARGET_DIR="$CACHE/cargo-target"
export npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export PIP_DISABLE_PIP_VERSION_CHECK=1

# The server, as the page starts it (its address from the log line, as lib.sh's start_server).
(cd "$WORK" && MODELSTUB_GRPC=127.0.0.1:0 exec setsid bash -euo pipefail "$WORK/blocks/server.sh") > "$WORK/server.log" 2>&1 &
SERVER_PID=$!; SERVER_PGID=$!
ADDR=""
for _ in $(seq 100); do
  ADDR="$(sed -n -e 's/^modelstub: gRPC listening on //p' -e 's/^{"level":"info","msg":"gRPC listening","address":"\([^"]*\)".*/\1/p' "$WORK/server.log")"
  [ -n "$ADDR" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$ADDR" ]; then
  bad "docs/clients.md: the server command ($(tr '\n' ' ' < "$WORK/blocks/server.sh")) did not start:"; indent < "$WORK/server.log"
  finish
fi
ok "docs/clients.md: the server command ($(tr '\n' ' ' < "$WORK/blocks/server.sh")) listens ($ADDR)"

# Each project in .cache/interop/clients/<p>: a fresh copy of its files and of proto/, keeping only
# the installed dependencies (.venv, node_modules) of the last run. A .venv made by another Python
# or for other requirements is dropped.
run_project() {
  local p="$1" dir="$CACHE/clients/$1" f
  mkdir -p "$dir"
  if [ "$p" = python ]; then
    local stamp; stamp="$(python3 --version 2>&1; cat "$ROOT/examples/clients/python/requirements.txt")"
    [ "$(cat "$dir/.venv.stamp" 2>/dev/null)" = "$stamp" ] || rm -rf "$dir/.venv"
  fi
  find "$dir" -mindepth 1 -maxdepth 1 ! -name .venv ! -name .venv.stamp ! -name node_modules -exec rm -rf {} +
  node "$HERE/check-docs.mjs" --files "$p" | while IFS= read -r f; do
    mkdir -p "$dir/$(dirname "$f")" && cp -p "$ROOT/examples/clients/$p/$f" "$dir/$f"
  done
  cp -rp "$ROOT/proto" "$dir/proto"
  local t0; t0="$(now_ms)"
  (cd "$dir" && MODELSTUB_GRPC="$ADDR" bash -euo pipefail "$WORK/blocks/$p.sh") > "$WORK/$p.out" 2> "$WORK/$p.err"
  local rc=$?
  echo "$(( $(now_ms) - t0 ))" > "$WORK/$p.ms"
  [ "$p" = python ] && [ -x "$dir/.venv/bin/python" ] && echo "$stamp" > "$dir/.venv.stamp"
  return $rc
}
declare -A PIDS
for p in "${PROJECTS[@]}"; do run_project "$p" & PIDS[$p]=$!; done
for p in "${PROJECTS[@]}"; do
  wait "${PIDS[$p]}"; rc=$?
  cmds="$(tr '\n' ';' < "$WORK/blocks/$p.sh" | sed 's/;$//; s/;/; /g')"
  if [ "$rc" = 0 ] && [ "$(tail -n 2 "$WORK/$p.out")" = "$(cat "$WORK/blocks/$p.out")" ]; then
    ok "docs/clients.md: $p: '$cmds' prints the page's output ($(cat "$WORK/$p.ms")ms)"
  else
    bad "docs/clients.md: $p: '$cmds' (exit $rc; expected the last lines to be the page's output block)"
    echo "     expected:"; indent < "$WORK/blocks/$p.out"
    echo "     stdout (last 15 lines):"; tail -n 15 "$WORK/$p.out" | indent
    echo "     stderr (last 25 lines):"; tail -n 25 "$WORK/$p.err" | indent
  fi
done

# Each project's two calls landed in its own session.
actual="$(cd "$ROOT" && node --input-type=module -e '
  const { createControlClient } = await import("./dist/src/port/control-client.js");
  const c = createControlClient(process.argv[1]);
  try { const r = await c.call("ListSessions", {}); for (const s of r.sessions) console.log(`${s.name} ${s.calls}`); }
  finally { c.close(); }' "$ADDR" 2>&1 | LC_ALL=C sort | tr '\n' ' ')"
if [ "$actual" = "clients-go 2 clients-python 2 clients-rust 2 clients-typescript 2 " ]; then
  ok "docs/clients.md: each project's two calls landed in its own session (clients-<project>, 2 calls)"
else
  bad "docs/clients.md: sessions (expected clients-go/python/rust/typescript with 2 calls each): $actual"
fi
stop_server
finish
