#!/usr/bin/env bash
# The benchmark suite in quick mode: checks that every measurement still runs end to end.
# No speed assertion here (CI machines are noisy); the numbers go to .cache/bench-quick.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
node bench/run.mjs --quick --out .cache/bench-quick.json
