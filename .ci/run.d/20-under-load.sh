#!/usr/bin/env bash
# The whole suite on every Node line package.json's engines promise, all three at once, on a
# machine kept above load 10 (issues 14 and 31): the machine's Node 20, Node 22 (the release
# pinned below) and Node 24 (the Dockerfile's, the one the image ships), each the official build
# (.ci/suite-on-node.sh). Three suites side by side on two cores load the machine by themselves;
# MODELSTUB_BUSY_PER_CORE busy loops a core (default 2, at normal priority) keep it loaded while
# the last suite finishes alone. CI machines are loaded: an episode or a test that holds only on
# a quiet machine is a bug, and no test bounds wall-clock time (a raised timeout bounds hangs).
# Then the isolation check (a bystander session beside each hostile attack) under one busy loop a
# core (MODELSTUB_ISOLATION_BUSY_PER_CORE): its bound is the bystander's wall time against a quiet
# run's, which a dozen loops would only scale. The load average is sampled through each part and
# printed. Ends with its own "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .cache
node22=22.23.5

busy=()
stop_busy() { [ "${#busy[@]}" -gt 0 ] && kill "${busy[@]}" 2>/dev/null; wait "${busy[@]}" 2>/dev/null; busy=(); }
trap stop_busy EXIT
loads=.cache/under-load.loadavg
start_busy() { # $1: busy loops a core
  for _ in $(seq "$(( $(nproc) * $1 ))"); do
    sh -c 'while :; do :; done' &
    busy+=("$!")
  done
  echo "saturating the machine: ${#busy[@]} busy loops ($(nproc) cores)"
  ( while sleep 20; do cut -d' ' -f1 /proc/loadavg >>"$loads"; done ) &
  busy+=("$!")
}
load_report() { # $1: what ran; prints the load average sampled through it, then starts afresh
  sort -n "$loads" | awk -v what="$1" '{ v[NR] = $1 } END { if (NR) printf "load average (1 min) through %s: min %s, median %s, max %s (%d samples)\n", what, v[1], v[int((NR + 1) / 2)], v[NR], NR }'
  : >"$loads"
}
: >"$loads"

# Fetch the binaries and build first, one at a time: the three suites share them.
bash .ci/container/get-node.sh "$node22" >/dev/null || { echo "CI: cannot fetch node $node22"; echo "0 passed, 1 failed"; exit 1; }
bash .ci/container/get-node.sh >/dev/null || { echo "CI: cannot fetch the image's node"; echo "0 passed, 1 failed"; exit 1; }
[ -d dist/bundle ] || npm run build >/dev/null || { echo "CI: build failed"; echo "0 passed, 1 failed"; exit 1; }

start_busy "${MODELSTUB_BUSY_PER_CORE:-2}"
export MODELSTUB_TEST_TIMEOUT_MS=180000
lines=(20 22 24)
pids=()
start=$SECONDS
for line in "${lines[@]}"; do
  report=".cache/vitest-node-$line.json" log=".cache/vitest-node-$line.log"
  rm -f "$report"
  case "$line" in
    20) node node_modules/vitest/vitest.mjs run --reporter=default --reporter=json --outputFile="$report" >"$log" 2>&1 & ;;
    22) bash .ci/suite-on-node.sh "$node22" "$report" >"$log" 2>&1 & ;;
    24) bash .ci/suite-on-node.sh image "$report" >"$log" 2>&1 & ;;
  esac
  pids+=("$!")
done
rc=0
reports=()
for i in "${!lines[@]}"; do
  line=${lines[$i]}
  wait "${pids[$i]}"
  lrc=$?
  echo "node $line: the suite exited $lrc ($(( SECONDS - start )) s since the three started)"
  reports+=(".cache/vitest-node-$line.json")
  if [ "$lrc" -ne 0 ]; then
    rc=1
    echo "---- node $line: the whole log (.cache/vitest-node-$line.log)"
    cat ".cache/vitest-node-$line.log"
    echo "---- end of node $line's log"
  else
    grep -E '^ *(Test Files|Tests|Duration) ' ".cache/vitest-node-$line.log" | sed "s/^/node $line: /"
  fi
done
stop_busy
load_report "the three suites"

# The isolation check (issue 27) under one busy loop a core: a bystander session beside each attack
# (test/fuzz/bystander.test.ts): the loop's longest stretch, in its own CPU time, within 100 ms, and
# beside the stalled readers that stretch and the bystander's p99 reported only (MODELSTUB_ISOLATION_UNDER_LOAD there).
unset MODELSTUB_TEST_TIMEOUT_MS
start_busy "${MODELSTUB_ISOLATION_BUSY_PER_CORE:-1}"
isolation=.cache/under-load-isolation.json
rm -f "$isolation"
MODELSTUB_ISOLATION_UNDER_LOAD=1 npx vitest run --config vitest.fuzz.config.ts test/fuzz/bystander.test.ts \
  --reporter=default --reporter=json --outputFile="$isolation" || rc=1
stop_busy
load_report "the isolation check"
reports+=("$isolation")

for r in "${reports[@]}"; do
  [ -f "$r" ] || { echo "CI: the loaded run wrote no report $r"; echo "0 passed, 1 failed"; exit 1; }
done
node -e 'let p=0,f=0;for(const a of process.argv.slice(1)){const r=require(require("path").resolve(a));p+=r.numPassedTests;f+=r.numFailedTests+(r.numRuntimeErrorTestSuites ?? 0)}console.log(`${p} passed, ${f} failed`)' "${reports[@]}"
exit "$rc"
