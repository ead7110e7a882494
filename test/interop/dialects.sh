#!/usr/bin/env bash
# The HTTP dialects from another language: the official Anthropic Python SDK (pinned in
# python/requirements-dialects.txt, installed into .cache/interop/venv-dialects) runs a tool loop
# unary and streaming, and meets a retried 429, 529 overloaded_error, a 400 and a mid-stream error
# (python/anthropic_loop.py) against `modelstub serve --http` with dialects.yaml on the virtual clock.
# Then the client matrix (python/clients.py, same venv): openai (chat and Responses), anthropic,
# langchain-openai, langchain-anthropic, openai-agents and google-genai on their default paths,
# each a tool loop unary and streamed against a fresh server of its own serving clients.yaml.
#
#   test/interop/dialects.sh      (builds dist/ first: npm run build, under a lock)
#
# Prints "N passed, N failed"; exits 1 on a failure.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="$ROOT/.cache/interop"
VENV="$CACHE/venv-dialects"
REQS="$HERE/python/requirements-dialects.txt"

fail_early() { echo "dialects.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
command -v node >/dev/null 2>&1 || fail_early "node not found: install Node 20+"
command -v python3 >/dev/null 2>&1 || fail_early "python3 not found: install Python 3.10+ with venv"
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || fail_early "python3 is $(python3 --version 2>&1): anthropic 2.16.0 needs Python 3.10+"

# dist/ is what bin/modelstub.js runs; the lock keeps parallel builds of one checkout apart.
(cd "$ROOT" && flock /tmp/modelstub-build.lock npm run build > /dev/null 2>&1) || fail_early "npm run build failed: run it at the repository root to see why"

# The venv, rebuilt when the pins or the Python version change.
stamp="$( { python3 --version 2>&1; cat "$REQS"; } | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$VENV" "$VENV.stamp"
  mkdir -p "$CACHE"
  python3 -m venv "$VENV" || fail_early "python3 -m venv failed"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-input -r "$REQS" \
    || fail_early "pip install of python/requirements-dialects.txt failed"
  echo "$stamp" > "$VENV.stamp"
fi

source "$HERE/lib.sh"
interop_setup dialects "dialects: "

# Like lib.sh's start_server, for the HTTP front: its address from the "HTTP listening on" line.
MODELSTUB_CLOCK=virtual node "$ROOT/bin/modelstub.js" serve --script "$HERE/dialects.yaml" --grpc 127.0.0.1:0 --http 127.0.0.1:0 > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
BASE=""
for _ in $(seq 100); do
  BASE="$(sed -n -e 's/^modelstub: HTTP listening on //p' -e 's/^{"level":"info","msg":"HTTP listening","url":"\([^"]*\)".*/\1/p' "$WORK/server.log" 2>/dev/null)"
  [ -n "$BASE" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$BASE" ]; then
  bad "server start"; indent < "$WORK/server.log"; echo "$passed passed, $failed failed"; exit 1
fi
ok "server listening on $BASE"

# run_py LABEL SCRIPT ARGS...: a Python check script in the venv, its ok/FAIL lines counted here.
run_py() {
  local label="$1" script="$2" rc line; shift 2
  "$VENV/bin/python" "$HERE/python/$script" "$@" > "$WORK/$label.txt" 2> "$WORK/$label.err"
  rc=$?
  while IFS= read -r line; do
    case "$line" in
      "ok   "*) ok "$label: ${line#ok   }" ;;
      "FAIL "*) bad "$label: ${line#FAIL }" ;;
    esac
  done < "$WORK/$label.txt"
  if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$WORK/$label.txt"; then bad "$label: $script exited $rc"; indent < "$WORK/$label.err"; fi
}

run_py python anthropic_loop.py -base "$BASE"
stop_server

# The client matrix: clients.py starts a server of its own for each client.
run_py clients clients.py -root "$ROOT"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
