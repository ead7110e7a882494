#!/usr/bin/env bash
# Runs the README's per-language examples against one server serving snippets.yaml, each in its
# own session, and checks that the README shows exactly these files (check-readme.mjs).
# Python runs the README's generation command (python/generate.sh) itself, in a scratch folder.
#
#   test/interop/snippets.sh          (build.sh first; needs a built server)
#
# Prints "N passed, N failed"; exits 1 on a failure.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="$HERE/.build/bin"
VENV="$ROOT/.cache/interop/venv"
source "$HERE/lib.sh"
interop_setup snippets
start_server "$HERE/snippets.yaml" "$WORK/server.log" || { echo "0 passed, 1 failed"; exit 1; }

# The Python example generates its stubs with the README's command, from a folder holding proto/.
mkdir -p "$WORK/python/gen" && ln -s "$ROOT/proto" "$WORK/python/proto"
if (cd "$WORK/python" && PATH="$VENV/bin:$PATH" sh "$HERE/python/generate.sh") > "$WORK/python.gen.log" 2>&1; then
  ok "snippet: python: the README's grpc_tools.protoc command generates the stubs"
else
  bad "snippet: python: the README's grpc_tools.protoc command"; sed 's/^/     /' "$WORK/python.gen.log"
fi

for l in go python rust ts; do
  if [ "$l" = python ]; then
    (cd "$WORK/python" && "$VENV/bin/python" "$HERE/python/snippet.py" "$ADDR") > "$WORK/$l.out" 2>&1
  else
    "$BIN/snippet-$l" "$ADDR" > "$WORK/$l.out" 2>&1
  fi
  if [ $? = 0 ] && [ "$(cat "$WORK/$l.out")" = "Hello from modelstub." ]; then
    ok "snippet: $l: one Generate call prints the scripted reply"
  else
    bad "snippet: $l: one Generate call (expected the line 'Hello from modelstub.')"; sed 's/^/     /' "$WORK/$l.out"
  fi
done

# Each example sent x-modelstub-session: readme-<lang>, so each has its own session of 1 call.
actual="$(cd "$ROOT" && node --input-type=module -e '
  const { createControlClient } = await import("./dist/src/port/control-client.js");
  const c = createControlClient(process.argv[1]);
  try { const r = await c.call("ListSessions", {}); for (const s of r.sessions) console.log(`${s.name} ${s.calls}`); }
  finally { c.close(); }' "$ADDR" 2>&1 | LC_ALL=C sort | tr '\n' ' ')"
if [ "$actual" = "readme-go 1 readme-python 1 readme-rust 1 readme-ts 1 " ]; then
  ok "snippet: each example's call landed in its own session"
else
  bad "snippet: sessions (expected readme-go/python/rust/ts with 1 call each): $actual"
fi

while IFS= read -r line; do
  case "$line" in
    "ok   "*) passed=$((passed + 1)) ;;
    "FAIL "*) failed=$((failed + 1)) ;;
  esac
  echo "$line"
done < <(node "$HERE/check-readme.mjs" 2>&1 || echo "FAIL README: check-readme.mjs exited non-zero")

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
