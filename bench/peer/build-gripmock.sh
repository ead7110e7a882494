#!/usr/bin/env bash
# Builds GripMock v3 (the bench's gRPC peer) from source into .cache/bin/gripmock, for when
# `go install github.com/bavix/gripmock/v3@...` is refused (the Go module proxy reachable here
# answers 403 for gripmock and for two of its dependencies: github.com/bavix/features@v1.0.4 and
# the github.com/bufbuild/protocompile pseudo-version gripmock's go.mod pins).
#
#   bench/peer/build-gripmock.sh [GRIPMOCK_GIT [FEATURES_GIT [PROTOCOMPILE_GIT]]]
#
# Each argument is a git repository to clone (a bare mirror is fine); they default to the env
# vars of the same names, then to /work/.mirror/<owner>+<name>/repo. GRIPMOCK_REF (default HEAD)
# picks the gripmock commit. The clones go to a scratch folder (GRIPMOCK_SRC_DIR, default
# .cache/gripmock-src, recreated each run). features is checked out at tag v1.0.4 (FEATURES_REF)
# and protocompile at the commit of the pseudo-version in gripmock's go.mod; gripmock's go.mod is
# pointed at both with `go mod edit -replace`; every other dependency comes from the module
# proxy. Writes .cache/bin/gripmock and .cache/bin/gripmock.commit (the gripmock commit built,
# 40 hex digits, which the bench records in results.meta.gripmock). Under 3 minutes cold on 2
# cores (2m41s on 2026-12-03, module downloads included), seconds with the build cache warm.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
export GOMODCACHE="${GOMODCACHE:-$here/.cache/gomod}" GOCACHE="${GOCACHE:-$here/.cache/gocache}" GOFLAGS="${GOFLAGS:--modcacherw}"

gripmock_git="${1:-${GRIPMOCK_GIT:-/work/.mirror/bavix+gripmock/repo}}"
features_git="${2:-${FEATURES_GIT:-/work/.mirror/bavix+features/repo}}"
protocompile_git="${3:-${PROTOCOMPILE_GIT:-/work/.mirror/bufbuild+protocompile/repo}}"
gripmock_ref="${GRIPMOCK_REF:-HEAD}"
features_ref="${FEATURES_REF:-v1.0.4}"
src="${GRIPMOCK_SRC_DIR:-$here/.cache/gripmock-src}"
bin_dir="$here/.cache/bin"

say() { echo "build-gripmock: $*" >&2; }
for g in "$gripmock_git" "$features_git" "$protocompile_git"; do
  git --git-dir="$g" rev-parse --git-dir >/dev/null 2>&1 || git -C "$g" rev-parse --git-dir >/dev/null 2>&1 || { say "not a git repository: $g"; exit 1; }
done
command -v go >/dev/null || { say "no go on PATH"; exit 1; }

rm -rf "$src"
mkdir -p "$src" "$bin_dir"

# gripmock: the commit to build.
git clone -q --no-checkout "$gripmock_git" "$src/gripmock"
git -C "$src/gripmock" -c advice.detachedHead=false checkout -q "$gripmock_ref"
commit="$(git -C "$src/gripmock" rev-parse HEAD)"
describe="$(git -C "$src/gripmock" describe --tags --always HEAD 2>/dev/null || echo "$commit")"
say "gripmock $describe ($commit)"

# protocompile: the commit named by the pseudo-version in gripmock's go.mod (its last 12 hex digits).
pc_version="$(awk '!/=>/ { for (i = 1; i < NF; i++) if ($i == "github.com/bufbuild/protocompile") { print $(i + 1); exit } }' "$src/gripmock/go.mod")"
pc_commit="${pc_version##*-}"
[[ "$pc_commit" =~ ^[0-9a-f]{12}$ ]] || { say "protocompile $pc_version in gripmock's go.mod is not a pseudo-version"; exit 1; }
say "protocompile $pc_version (commit $pc_commit)"
git clone -q --no-checkout "$protocompile_git" "$src/protocompile"
# One test tarball is absent from the mirror: leave it out of the checkout (the build never reads
# it). git still prints "error: invalid object ... googleapis-....tar.gz" (twice) and goes on.
git -C "$src/protocompile" sparse-checkout set --no-cone '/*' '!/internal/testing/googleapis/*.tar.gz'
git -C "$src/protocompile" -c advice.detachedHead=false checkout -q "$pc_commit"

# features: the tag gripmock's go.mod requires.
say "features $features_ref"
git clone -q --no-checkout "$features_git" "$src/features"
git -C "$src/features" -c advice.detachedHead=false checkout -q "$features_ref"

cd "$src/gripmock"
go mod edit -replace "github.com/bavix/features=$src/features" -replace "github.com/bufbuild/protocompile=$src/protocompile"
pkg=github.com/bavix/gripmock/v3/internal/infra/build
start=$(date +%s)
go build -trimpath -ldflags "-s -w -X $pkg.Version=$describe -X $pkg.Commit=${commit:0:7}" -o "$bin_dir/gripmock.tmp" .
mv -f "$bin_dir/gripmock.tmp" "$bin_dir/gripmock"
echo "$commit" >"$bin_dir/gripmock.commit"
say "built $bin_dir/gripmock from gripmock $commit in $(( $(date +%s) - start )) s"
