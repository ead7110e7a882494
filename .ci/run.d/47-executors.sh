#!/usr/bin/env bash
# Issue 30, item 5: `modelstub matrix run` drives the example executors of examples/executors/
# (Python grpcio, Go grpc-go, Rust tonic; built with the interop step's caches by
# test/executors/build.sh), and must catch three executors broken on purpose.
#
# Per executor, on the real clock (crash plans hold their call until the kill), --jobs 2:
#   - the whole single-fault matrix of examples/executors/agent.yaml: every position of the
#     clean run crossed with all eight kinds, crash and restart included (26 plans and the clean
#     run), judged against examples/executors/expect.yaml, with
#     examples/executors/check-side-effects.sh as the check hook (no tool ran twice);
#   - a pair sample: 8 two-fault plans (--pairs --clean-positions, retryable kinds and crash),
#     picked by --sample 8 --seed 30, the same 8 on every machine;
#   - the episodes of every plan without a hang or a crash (whose held calls end at real times)
#     are byte-identical to the Python executor's, plan by plan.
# Then `matrix run` must fail (exit 3) the Python executor broken three ways (EXECUTOR_BROKEN),
# with the reason code that names the fault: retry-all retries INTERNAL (`retried`), no-journal
# re-runs its tools after a crash (`check-hook`: a tool ran twice), nondeterministic puts the
# time into a request (`nondeterministic`, by --repeat 2).
# Counts one test per plan of each run, one per cross-language comparison and one per broken
# executor; ends with "N passed, N failed". Reports (JUnit, JSON lines, HTML) in .cache/executors/.
set -uo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
passed=0
failed=0
die() { echo "FAIL $*"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }

flock /tmp/modelstub-build.lock npm run build >/dev/null || die "npm run build"
test/executors/build.sh || die "building the executors (test/executors/build.sh)"
B=.cache/executors/bin
OUT=.cache/executors/matrix
rm -rf "$OUT"; mkdir -p "$OUT"
[ -x examples/executors/check-side-effects.sh ] || die "examples/executors/check-side-effects.sh is not executable"

# A hung call ends by the executor's deadline: 2.5 s (default 5 s) keeps the hang plans short.
export MODELSTUB_CALL_TIMEOUT_MS=2500
matrix() { # matrix NAME MATRIX-RUN-ARGS... -- COMMAND: one `matrix run`, its reports in $OUT/NAME.*
  local name="$1"; shift
  node bin/modelstub.js matrix run examples/executors/agent.yaml --jobs 2 \
    --expect examples/executors/expect.yaml --check-hook examples/executors/check-side-effects.sh \
    --out "$OUT/$name" --jsonl "$OUT/$name.jsonl" --junit "$OUT/$name.xml" --html "$OUT/$name.html" "$@" \
    >"$OUT/$name.log" 2>&1
}
# verdicts FILE.jsonl: "PASSED FAILED" over its plans (an `error` verdict counts as failed)
verdicts() {
  node -e 'const ls = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
    const p = ls.filter((l) => l.verdict === "pass").length; console.log(p, ls.length - p)' "$1" 2>/dev/null || echo "0 1"
}
# reasons FILE.jsonl ID-REGEX: the reason codes of the failed plans whose id matches, one a line
reasons() {
  node -e 'const re = new RegExp(process.argv[2]); for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse))
    if (l.verdict !== "pass" && re.test(l.id)) for (const r of l.reasons) console.log(`${l.id} ${r.code}`)' "$1" "$2" 2>/dev/null
}

for lang in python go rust; do
  for run in single pairs; do
    s0=$SECONDS
    if [ "$run" = single ]; then
      matrix "$lang-$run" --kinds unavailable,internal,resource-exhausted,timeout,hang,break,drop,crash -- "$B/executor-$lang"
    else
      matrix "$lang-$run" --pairs --clean-positions --kinds unavailable,resource-exhausted,timeout,crash --sample 8 --seed 30 -- "$B/executor-$lang"
    fi
    rc=$?
    read -r p f <<<"$(verdicts "$OUT/$lang-$run.jsonl")"
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 1 ]; then
      echo "ok   $lang: matrix run, $run: $p plans passed ($((SECONDS - s0)) s)"
    else
      [ "$f" -eq 0 ] && failed=$((failed + 1))
      echo "FAIL $lang: matrix run, $run: exit $rc, $p passed, $f failed ($OUT/$lang-$run.log):"
      grep -E '^(FAIL|ERR )|^ +\[' "$OUT/$lang-$run.log" | head -20
      tail -n 3 "$OUT/$lang-$run.log"
    fi
  done
done

# Same requests, same plan, same session names: the same episode bytes in every language.
for lang in go rust; do
  for run in single pairs; do
    differ=""
    n=0
    for f in "$OUT/python-$run"/episodes/*.json; do
      case "$f" in *hang*|*crash*) continue ;; esac
      n=$((n + 1))
      cmp -s "$f" "$OUT/$lang-$run/episodes/$(basename "$f")" || differ="$differ $(basename "$f" .json)"
    done
    if [ -z "$differ" ] && [ "$n" -gt 0 ]; then passed=$((passed + 1)); echo "ok   $lang: $run: $n episodes byte-identical to python's"
    else failed=$((failed + 1)); echo "FAIL $lang: $run: episodes differ from python's ($n compared):$differ"; fi
  done
done

# The broken executors: `matrix run` fails each (exit 3), for the right reason.
broken() { # broken LABEL NAME ID-REGEX CODE MATRIX-RUN-ARGS... -- COMMAND
  local label="$1" name="$2" id="$3" code="$4"; shift 4
  matrix "broken-$name" "$@"
  local rc=$?
  if [ "$rc" -eq 3 ] && reasons "$OUT/broken-$name.jsonl" "$id" | grep -q " $code\$"; then
    passed=$((passed + 1)); echo "ok   broken executor fails: $label [$code]"
  else
    failed=$((failed + 1)); echo "FAIL broken executor was not caught: $label (exit $rc, wanted 3 and [$code] on a plan matching /$id/):"
    reasons "$OUT/broken-$name.jsonl" . | head -5; tail -n 3 "$OUT/broken-$name.log"
  fi
}
broken "retries INTERNAL" retry-all '\.internal-' retried \
  --kinds internal -- env EXECUTOR_BROKEN=retry-all "$B/executor-python"
broken "re-runs its tools after a crash" no-journal '\.crash-' check-hook \
  --kinds crash --positions act:1,report:1 -- env EXECUTOR_BROKEN=no-journal "$B/executor-python"
broken "sends a nondeterministic request" nondeterministic '^clean$' nondeterministic \
  --kinds unavailable --positions plan:1 --repeat 2 -- env EXECUTOR_BROKEN=nondeterministic "$B/executor-python"

echo "executors: $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
