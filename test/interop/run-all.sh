#!/usr/bin/env bash
# `npm run test:interop`: builds the interop clients (build.sh), then runs the scenario suite
# (run.sh), docs/clients.md's client projects (snippets.sh), the grpcurl session (grpcurl.sh),
# the fault-plan matrix in TypeScript and Python (faults.sh) and the Python clients against the
# HTTP front, the Anthropic SDK's failures and the client matrix (dialects.sh); each starts and
# stops its own servers. Ends with one "N passed, N failed" line; exits 1 on any failure or
# on a missing toolchain (named). npm runs `npm run build` first (pretest:interop).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start="$(date +%s)"

missing=()
command -v node >/dev/null 2>&1 || missing+=("node (Node 20+)")
command -v go >/dev/null 2>&1 || missing+=("go (Go 1.26+, for the Go client and grpcurl)")
command -v python3 >/dev/null 2>&1 || missing+=("python3 (Python 3.9+ with venv)")
command -v cargo >/dev/null 2>&1 || missing+=("cargo (Rust 1.88+ via rustup)")
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do echo "interop: missing toolchain: $m" >&2; done
  echo "0 passed, ${#missing[@]} failed"
  exit 1
fi

echo "== interop: build (test/interop/build.sh)"
if ! bash "$HERE/build.sh"; then
  echo "interop: the build failed (see the message above)"
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0; failed=0
for suite in run.sh snippets.sh grpcurl.sh faults.sh dialects.sh; do
  echo "== interop: $suite"
  bash "$HERE/$suite" 2>&1 | tee "${TMPDIR:-/tmp}/modelstub-interop-$suite.$$.log"
  rc=${PIPESTATUS[0]}
  totals="$(tail -n 1 "${TMPDIR:-/tmp}/modelstub-interop-$suite.$$.log")"
  rm -f "${TMPDIR:-/tmp}/modelstub-interop-$suite.$$.log"
  if [[ "$totals" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
    [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" = 0 ] && failed=$((failed + 1))
  else
    echo "FAIL $suite ended without totals (exit $rc)"; failed=$((failed + 1))
  fi
done

echo "interop: done in $(( $(date +%s) - start ))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
