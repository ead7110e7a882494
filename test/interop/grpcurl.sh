#!/usr/bin/env bash
# The README's grpcurl inspection session, scripted and asserted against a fresh server that
# serves grpcurl.yaml: list, describe, a JSON Generate, a GenerateStream, a call in a session
# chosen with -H, and -max-time on a hang.
#
#   test/interop/grpcurl.sh          (build.sh grpcurl first; needs a built server)
#
# grpcurl discovers the services through server reflection, as users run it. With
# MODELSTUB_INTEROP_GRPCURL_PROTOS=1 (or when reflection answers nothing, which also fails the
# reflection check) it falls back to reading our .proto files:
#   -import-path proto -proto modelstub/v1/model.proto -proto modelstub/v1/control.proto
# Prints "N passed, N failed"; exits 1 on a failure.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
GRPCURL="${GRPCURL:-$ROOT/.cache/bin/grpcurl}"
[ -x "$GRPCURL" ] || { echo "grpcurl.sh: $GRPCURL is not built: run test/interop/build.sh grpcurl" >&2; exit 1; }
[ -f "$ROOT/dist/bundle/modelstub.mjs" ] || { echo "grpcurl.sh: no built server in dist/: run 'npm run build'" >&2; exit 1; }

source "$HERE/lib.sh"
interop_setup grpcurl "grpcurl: "
start_server "$HERE/grpcurl.yaml" "$WORK/server.log" || { echo "0 passed, 1 failed"; exit 1; }

# g NAME ARGS...: runs grpcurl -plaintext ARGS against the server; NAME.out, NAME.err, NAME.rc.
SOURCE=()
g() {
  local name="$1"; shift
  "$GRPCURL" -plaintext "${SOURCE[@]}" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"
  echo $? > "$WORK/$name.rc"
}
rc() { cat "$WORK/$1.rc"; }
show() { { echo "exit $(rc "$1"); stdout:"; cat "$WORK/$1.out"; echo "stderr:"; cat "$WORK/$1.err"; } | indent; }
expect_out() { # expect_out NAME LABEL < EXPECTED: stdout must be EXPECTED (never pipe into it: a subshell loses the count)
  cat > "$WORK/$1.expected"
  if [ "$(rc "$1")" = 0 ] && cmp -s "$WORK/$1.expected" "$WORK/$1.out"; then ok "$2"
  else bad "$2"; show "$1"; diff "$WORK/$1.expected" "$WORK/$1.out" | indent; fi
}
request() { # request STEP: a GenerateRequest as grpcurl's -d JSON (protojson field names)
  printf '{"model": "grpcurl-model", "messages": [{"role": "ROLE_USER", "content": "Hi"}], "stepId": "%s"}' "$1"
}

# list: through reflection, unless told to read the protos.
PROTO_FLAGS=(-import-path "$ROOT/proto" -proto modelstub/v1/model.proto -proto modelstub/v1/control.proto)
if [ "${MODELSTUB_INTEROP_GRPCURL_PROTOS:-0}" = 1 ]; then
  SOURCE=("${PROTO_FLAGS[@]}")
  echo "     (MODELSTUB_INTEROP_GRPCURL_PROTOS=1: grpcurl reads proto/ instead of asking the server)"
  g list "$ADDR" list
  expect_out list "list (from -proto) shows ControlService and ModelService" \
    < <(printf 'modelstub.v1.ControlService\nmodelstub.v1.ModelService\n')
else
  g list "$ADDR" list
  if [ "$(rc list)" = 0 ]; then
    expect_out list "list (server reflection, no -proto) shows Health, ControlService and ModelService" \
      < <(printf 'grpc.health.v1.Health\nmodelstub.v1.ControlService\nmodelstub.v1.ModelService\n')
  else
    bad "list through server reflection (no -proto); the checks below fall back to -proto"; show list
    SOURCE=("${PROTO_FLAGS[@]}")
  fi
fi

g describe "$ADDR" describe modelstub.v1.ModelService
missing=""
for rpc in "rpc Generate ( .modelstub.v1.GenerateRequest ) returns ( .modelstub.v1.GenerateResponse );" \
  "rpc GenerateStream ( .modelstub.v1.GenerateStreamRequest ) returns ( stream .modelstub.v1.GenerateStreamResponse );" \
  "rpc ListModels ( .modelstub.v1.ListModelsRequest ) returns ( .modelstub.v1.ListModelsResponse );"; do
  grep -qF -- "$rpc" "$WORK/describe.out" || missing="$missing${missing:+; }$rpc"
done
if [ "$(rc describe)" = 0 ] && [ -z "$missing" ] && [ "$(grep -c '^  rpc ' "$WORK/describe.out")" = 3 ]; then
  ok "describe modelstub.v1.ModelService shows its three rpcs"
else
  bad "describe modelstub.v1.ModelService${missing:+ (missing: $missing)}"; show describe
fi

g generate -d "$(request hello)" "$ADDR" modelstub.v1.ModelService/Generate
expect_out generate "a JSON Generate call (-d) answers the scripted reply" <<'EOF'
{
  "id": "gen-default-1",
  "model": "grpcurl-model",
  "message": {
    "role": "ROLE_ASSISTANT",
    "content": "Hello, grpcurl."
  },
  "finishReason": "FINISH_REASON_STOP",
  "usage": {
    "inputTokens": 1,
    "outputTokens": 4,
    "totalTokens": 5
  }
}
EOF

g stream -d "$(request stream)" "$ADDR" modelstub.v1.ModelService/GenerateStream
frame() { printf '{\n  "id": "gen-default-2",\n  "model": "grpcurl-model",\n  "textDelta": "%s"\n}\n' "$1"; }
expected_stream() { frame "one "; frame "two "; frame "three"; cat <<'EOF'
{
  "id": "gen-default-2",
  "model": "grpcurl-model",
  "final": {
    "finishReason": "FINISH_REASON_STOP",
    "usage": {
      "inputTokens": 1,
      "outputTokens": 4,
      "totalTokens": 5
    }
  }
}
EOF
}
expect_out stream "GenerateStream answers three text_delta frames, then the final frame" < <(expected_stream)

g session -H x-modelstub-session:grpcurl-session -d "$(request hello)" "$ADDR" modelstub.v1.ModelService/Generate
if [ "$(rc session)" = 0 ] && grep -qF '"id": "gen-grpcurl-session-1"' "$WORK/session.out"; then
  ok "-H x-modelstub-session:grpcurl-session answers from that session (id gen-grpcurl-session-1)"
else
  bad "-H x-modelstub-session:grpcurl-session"; show session
fi
g sessions "$ADDR" modelstub.v1.ControlService/ListSessions
expect_out sessions "ControlService/ListSessions shows the -H call in its own session, the others in default" <<'EOF'
{
  "sessions": [
    {
      "name": "default",
      "calls": 2,
      "scriptName": "grpcurl"
    },
    {
      "name": "grpcurl-session",
      "calls": 1,
      "scriptName": "grpcurl"
    }
  ]
}
EOF

# grpcurl exits 64 + the status code when an RPC fails: DEADLINE_EXCEEDED (4) is 68.
g hang -max-time 0.5 -d "$(request stuck)" "$ADDR" modelstub.v1.ModelService/Generate
if [ "$(rc hang)" = 68 ] && grep -q '^  Code: DeadlineExceeded$' "$WORK/hang.err" && [ ! -s "$WORK/hang.out" ]; then
  ok "-max-time 0.5 on a hang: exit 68, Code: DeadlineExceeded"
else
  bad "-max-time 0.5 on a hang (expected exit 68 and 'Code: DeadlineExceeded' on stderr)"; show hang
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
