# Shared by run.sh, snippets.sh, grpcurl.sh and faults.sh (sourced, not run): a scratch folder removed on
# exit together with any server still running, pass/fail counters, and a modelstub server.
#
#   interop_setup NAME [LABEL]   WORK=a fresh folder; ok/bad lines start with LABEL
#   start_server SCRIPT LOG      serves SCRIPT on 127.0.0.1:0; sets SERVER_PID and ADDR
#   stop_server                  stops it and waits for it
# A server started in a process group of its own (setsid) sets SERVER_PGID too: the whole group
# is stopped, so a server behind a shell (snippets.sh runs docs/clients.md's command) goes too.
# Needs ROOT (the repository root) and a built server (npm run build).

interop_setup() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/modelstub-$1.XXXXXX")"
  LABEL="${2:-}"
  SERVER_PID=""; SERVER_PGID=""
  passed=0; failed=0
  trap 'interop_cleanup' EXIT
}
interop_cleanup() {
  [ -n "$SERVER_PGID" ] && kill -- "-$SERVER_PGID" 2>/dev/null
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}

ok() { passed=$((passed + 1)); echo "ok   $LABEL$*"; }
bad() { failed=$((failed + 1)); echo "FAIL $LABEL$*"; }
indent() { sed 's/^/     /'; }

# Returns 1 (having printed the server's output) when it exits or prints no address in 10 s.
start_server() {
  node "$ROOT/bin/modelstub.js" serve --script "$1" --grpc 127.0.0.1:0 > "$2" 2>&1 &
  SERVER_PID=$!
  ADDR=""
  local _
  for _ in $(seq 100); do
    ADDR="$(sed -n -e 's/^modelstub: gRPC listening on //p' -e 's/^{"level":"info","msg":"gRPC listening","address":"\([^"]*\)".*/\1/p' "$2")"
    [ -n "$ADDR" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start:" >&2; cat "$2" >&2
  return 1
}
stop_server() {
  if [ -n "$SERVER_PGID" ]; then kill -- "-$SERVER_PGID" 2>/dev/null; else kill "$SERVER_PID" 2>/dev/null; fi
  wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; SERVER_PGID=""
}
