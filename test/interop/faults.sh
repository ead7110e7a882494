#!/usr/bin/env bash
# The fault-plan proof across languages (issue 15): the crash matrix of test/faults/research.yaml,
# a sample of its plans run by the TypeScript executor (test/faults/retrying-executor.ts, through
# ts/fault-matrix.mjs) and by its Python twin (python/fault_matrix.py) against one server on the
# virtual clock, in the same session names: each plan's episode must be byte-identical between
# the two, and so must the executors' transcripts (outcome, tools run, every attempt).
#
#   test/interop/faults.sh      (build.sh python ts first; needs a built server: npm run build)
#
# Prints "N passed, N failed"; exits 1 on a failure.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SCRIPT="$ROOT/test/faults/research.yaml"
PY="$ROOT/.cache/interop/venv/bin/python"
KINDS="unavailable,internal,resource-exhausted,timeout,hang,break,drop"
# The sample: every kind at a streamed call (act.1, after the search tool ran), every kind that
# applies at a unary call (next.3), and a break of the last call.
SAMPLE=("act.1.*" "next.3.*" "answer.1.break-*")

command -v node >/dev/null 2>&1 || { echo "faults.sh: node not found: install Node 20+" >&2; exit 1; }
[ -f "$ROOT/dist/bundle/modelstub.mjs" ] && [ -f "$ROOT/dist/src/index.js" ] \
  || { echo "faults.sh: no built server in dist/: run 'npm run build' at the repository root" >&2; exit 1; }
[ -x "$PY" ] && [ -f "$HERE/.build/python/gen/modelstub/v1/control_pb2_grpc.py" ] \
  || { echo "faults.sh: the Python stubs are not built: run test/interop/build.sh python" >&2; exit 1; }

source "$HERE/lib.sh"
interop_setup faults "faults: "
mkdir -p "$WORK/clean" "$WORK/plans" "$WORK/ts" "$WORK/py" "$WORK/exe/test/faults"

# The TypeScript executor, compiled alone; its ../../src/ is the built dist/src.
ln -s "$ROOT/dist/src" "$WORK/exe/src"
ln -s "$ROOT/node_modules" "$WORK/exe/node_modules"
if "$ROOT/node_modules/.bin/tsc" --noCheck --noResolve --skipLibCheck --target es2022 --module nodenext \
    --moduleResolution nodenext --outDir "$WORK/exe/test/faults" "$ROOT/test/faults/retrying-executor.ts" > "$WORK/tsc.log" 2>&1; then
  ok "retrying-executor.ts compiled"
else
  bad "retrying-executor.ts compiled"; indent < "$WORK/tsc.log"; echo "$passed passed, $failed failed"; exit 1
fi
EXE="$WORK/exe/test/faults/retrying-executor.js"
ts_run() { node "$HERE/ts/fault-matrix.mjs" -addr "$ADDR" -executor "$EXE" "$@"; }

export MODELSTUB_CLOCK=virtual
start_server "$SCRIPT" "$WORK/server.log" || { bad "server start"; echo "$passed passed, $failed failed"; exit 1; }

# A clean run (a plan of no rules), and the matrix of its calls.
echo '{"name": "clean", "rules": []}' > "$WORK/clean.json"
if ts_run -out "$WORK/clean" "$WORK/clean.json" > "$WORK/clean.txt" 2>&1 && grep -q '^clean: ok ' "$WORK/clean.txt"; then
  ok "clean run: $(cut -d'|' -f1 "$WORK/clean.txt" | sed 's/ *$//')"
else
  bad "clean run"; indent < "$WORK/clean.txt"
fi
if node "$ROOT/bin/modelstub.js" matrix "$SCRIPT" --from-episode "$WORK/clean/clean.binpb" --kinds "$KINDS" \
    --out "$WORK/plans" > "$WORK/matrix.jsonl" 2> "$WORK/matrix.err"; then
  n="$(wc -l < "$WORK/matrix.jsonl")"
  if [ "$n" -ge 60 ] && [ "$(ls "$WORK/plans" | wc -l)" = "$n" ]; then ok "matrix: $n plans written"; else bad "matrix: $n plans (60 or more expected)"; fi
else
  bad "modelstub matrix"; indent < "$WORK/matrix.err"
fi

plans=()
for glob in "${SAMPLE[@]}"; do for f in "$WORK/plans/"$glob.json; do [ -f "$f" ] && plans+=("$f"); done; done
kinds_seen="$(for f in "${plans[@]}"; do basename "$f" | sed -E 's/^[^.]*\.[0-9]+\.([a-z-]+)-[0-9a-f]+\.json$/\1/'; done | sort -u | wc -l)"
if [ "${#plans[@]}" -ge 8 ] && [ "$kinds_seen" = 7 ]; then ok "sample: ${#plans[@]} plans, all 7 kinds"
else bad "sample: ${#plans[@]} plans, $kinds_seen kinds (8 or more plans, 7 kinds expected)"; fi

# The same plans, the same session names: TypeScript first, then Python (SetFaultPlan starts
# each session afresh).
ts_run -out "$WORK/ts" "${plans[@]}" > "$WORK/ts.txt" 2> "$WORK/ts.err" || { bad "TypeScript executor"; indent < "$WORK/ts.err"; }
"$PY" "$HERE/python/fault_matrix.py" -addr "$ADDR" -out "$WORK/py" "${plans[@]}" > "$WORK/py.txt" 2> "$WORK/py.err" \
  || { bad "Python executor"; indent < "$WORK/py.err"; }
stop_server

for f in "${plans[@]}"; do
  s="$(basename "$f" .json)"
  if [ -f "$WORK/ts/$s.binpb" ] && [ -f "$WORK/py/$s.binpb" ] && cmp -s "$WORK/ts/$s.binpb" "$WORK/py/$s.binpb"; then
    ok "$s: episode bytes Python = TypeScript ($(grep "^$s: " "$WORK/ts.txt" | cut -d'|' -f1 | sed -e "s/^$s: //" -e 's/ *$//'))"
  else
    bad "$s: episode bytes Python = TypeScript"
    [ -f "$WORK/ts/$s.binpb" ] && [ -f "$WORK/py/$s.binpb" ] \
      && node "$ROOT/bin/modelstub.js" episode compare "$WORK/ts/$s.binpb" "$WORK/py/$s.binpb" 2>&1 | indent
  fi
done
if [ -s "$WORK/ts.txt" ] && cmp -s "$WORK/ts.txt" "$WORK/py.txt"; then ok "transcripts: Python = TypeScript (outcomes, tools, attempts)"
else bad "transcripts: Python = TypeScript"; diff "$WORK/ts.txt" "$WORK/py.txt" | indent; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
