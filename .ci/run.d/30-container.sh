#!/usr/bin/env bash
# The container, for real (issue 14): builds the Dockerfile with podman on a locally made base of
# the same Node version (no registry here), runs the image as docs/container.md tells users to,
# calls it, stops it, checks the episodes it wrote, and removes what it made (the base image is
# kept for the next run). .ci/container/check.mjs says what it asserts. Installs podman, runc
# and debootstrap with apt-get when missing. Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
. .ci/container/podman-env.sh
[ -f dist/src/port/grpc-port.js ] || npm run build --silent
base="$(bash .ci/container/make-base.sh)"
echo "container: base image $base ready after $(( SECONDS - t0 )) s"
node .ci/container/check.mjs "$base"
echo "container: step took $(( SECONDS - t0 )) s"
