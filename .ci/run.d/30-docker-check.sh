#!/usr/bin/env bash
# The Dockerfile's build and run steps, carried out without a Docker engine.
set -euo pipefail
cd "$(dirname "$0")/../.."
node .ci/docker-check.mjs
