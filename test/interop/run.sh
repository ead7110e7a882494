#!/usr/bin/env bash
# Runs the interop scenario with every built executor against the real server and checks:
#   1. alone: each executor on a fresh server under the shared session name "interop"; the four
#      episodes must be byte-identical (ids derive from the session name, so the same name means
#      no scrubbing), and so must the executors' step transcripts;
#   2. together: all executors at once against ONE server, each in its own session
#      "interop-<lang>"; each episode must equal the bytes the same executor recorded alone on a
#      fresh server under that same name (so no session saw another's calls), and the server
#      must list exactly those sessions;
#   3. re-encoding: every episode decoded and re-encoded by every executor's protobuf library
#      (Go deterministic marshal, Python deterministic serialization, prost, protobuf-es) equals
#      the server's bytes.
# On a byte difference it prints the first differing field (modelstub episode compare).
#
#   test/interop/run.sh [go] [python] [rust] [ts]      (no language: all four; build.sh first)
#
# Needs a built server (npm run build). Prints "N passed, N failed"; exits 1 on a failure.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="$HERE/.build/bin"
LANGS=("$@")
[ ${#LANGS[@]} -eq 0 ] && LANGS=(go python rust ts)
SESSION="interop"

command -v node >/dev/null 2>&1 || { echo "run.sh: node not found: install Node 20+ to run the server" >&2; exit 1; }
[ -f "$ROOT/dist/bundle/modelstub.mjs" ] && [ -f "$ROOT/dist/src/port/grpc-port.js" ] \
  || { echo "run.sh: no built server in dist/: run 'npm run build' at the repository root" >&2; exit 1; }
for l in "${LANGS[@]}"; do
  [ -x "$BIN/executor-$l" ] || { echo "run.sh: executor-$l is not built: run test/interop/build.sh $l" >&2; exit 1; }
done

source "$HERE/lib.sh"
interop_setup interop
mkdir -p "$WORK/alone" "$WORK/own" "$WORK/together"

same_bytes() { # same_bytes LABEL EXPECTED ACTUAL: one ok/FAIL, with the first differing field on FAIL
  if cmp -s "$2" "$3"; then ok "$1"
  else bad "$1"; node "$ROOT/bin/modelstub.js" episode compare "$2" "$3" 2>&1 | indent; fi
}

run_alone() { # run_alone DIR LANG SESSION: the executor alone on a fresh server
  local dir="$1" l="$2" s="$3"
  start_server "$HERE/scenario.yaml" "$WORK/$dir/server-$l.log" || { bad "$dir: $l: server start"; return; }
  if "$BIN/executor-$l" -addr "$ADDR" -session "$s" -out "$WORK/$dir/$l.binpb" > "$WORK/$dir/$l.txt" 2>&1; then
    ok "$dir: $l scenario in session $s on a fresh server"
  else
    bad "$dir: $l scenario in session $s on a fresh server"; indent < "$WORK/$dir/$l.txt"
    rm -f "$WORK/$dir/$l.binpb"
  fi
  stop_server
}

# 1. Alone, one name: the same bytes from every language.
for l in "${LANGS[@]}"; do run_alone alone "$l" "$SESSION"; done
ref=""
for l in "${LANGS[@]}"; do
  [ -f "$WORK/alone/$l.binpb" ] || continue
  # The transcript shows what each client saw; only the -out path differs.
  sed 's/ written to .*//' "$WORK/alone/$l.txt" > "$WORK/alone/$l.steps"
  if [ -z "$ref" ]; then ref="$l"; continue; fi
  same_bytes "alone: episode bytes $l = $ref" "$WORK/alone/$ref.binpb" "$WORK/alone/$l.binpb"
  if cmp -s "$WORK/alone/$ref.steps" "$WORK/alone/$l.steps"; then ok "alone: step transcript $l = $ref"
  else bad "alone: step transcript $l differs from $ref"; diff "$WORK/alone/$ref.steps" "$WORK/alone/$l.steps" | indent; fi
done

# 2. Together on one server, one session each, against each language alone under that name.
for l in "${LANGS[@]}"; do run_alone own "$l" "$SESSION-$l"; done
if start_server "$HERE/scenario.yaml" "$WORK/together/server.log"; then
  pids=()
  for l in "${LANGS[@]}"; do
    "$BIN/executor-$l" -addr "$ADDR" -session "$SESSION-$l" -out "$WORK/together/$l.binpb" > "$WORK/together/$l.txt" 2>&1 &
    pids+=($!)
  done
  i=0
  for l in "${LANGS[@]}"; do
    if wait "${pids[$i]}"; then
      ok "together: $l scenario in session $SESSION-$l, all ${#LANGS[@]} at once on one server"
      [ -f "$WORK/own/$l.binpb" ] \
        && same_bytes "together: $l episode = $l alone in session $SESSION-$l" "$WORK/own/$l.binpb" "$WORK/together/$l.binpb"
    else
      bad "together: $l scenario in session $SESSION-$l, all ${#LANGS[@]} at once on one server"; indent < "$WORK/together/$l.txt"
    fi
    i=$((i + 1))
  done
  # Exactly the executors' sessions, 7 calls each: nothing landed in "default" or elsewhere.
  expected="$(for l in "${LANGS[@]}"; do echo "$SESSION-$l 7"; done | LC_ALL=C sort)"
  actual="$(cd "$ROOT" && node --input-type=module -e '
    const { createControlClient } = await import("./dist/src/port/control-client.js");
    const c = createControlClient(process.argv[1]);
    try { const r = await c.call("ListSessions", {}); for (const s of r.sessions) console.log(`${s.name} ${s.calls}`); }
    finally { c.close(); }' "$ADDR" 2>&1 | LC_ALL=C sort)"
  if [ "$actual" = "$expected" ]; then ok "together: the server lists exactly the ${#LANGS[@]} sessions, 7 calls each"
  else bad "together: ListSessions"; { echo "expected:"; echo "$expected"; echo "got:"; echo "$actual"; } | indent; fi
  stop_server
else
  bad "together: server start"
fi

# 3. Re-encoding by every protobuf library.
for e in "${LANGS[@]}"; do
  [ -f "$WORK/alone/$e.binpb" ] || continue
  for r in "${LANGS[@]}"; do
    label="re-encode: $e episode by $r = server bytes"
    if "$BIN/executor-$r" -reencode "$WORK/alone/$e.binpb" -out "$WORK/alone/$e.by-$r.binpb"; then
      same_bytes "$label" "$WORK/alone/$e.binpb" "$WORK/alone/$e.by-$r.binpb"
    else
      bad "$label (the re-encoder failed)"
    fi
  done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
