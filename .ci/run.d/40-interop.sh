#!/usr/bin/env bash
# The interop suite (issue 7): Go, Python, Rust and TypeScript clients, README examples, grpcurl.
# Caches live in .cache/ and test/interop/.build/ (git-ignored); a cold run takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run test:interop
