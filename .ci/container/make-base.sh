#!/usr/bin/env bash
# Makes the local stand-in for the Dockerfile's base image (node:<version>-bookworm-slim) where
# no registry can be reached: Debian bookworm from debootstrap (minbase, as the official slim
# images), the official node binary of the same version (get-node.sh) with npm and npx, the
# `node` user (uid/gid 1000, home /home/node) and the base's PATH, NODE_VERSION and CMD.
# Kept in podman's storage as localhost/modelstub-ci-node-base:<version> and reused while present
# (delete it with `podman rmi` to rebuild). Prints the image name.
# Where this machine intercepts TLS (NODE_EXTRA_CA_CERTS set), the base carries that CA file at
# the same path and sets the variable, or `npm ci` in the build could not reach the registry.
set -euo pipefail
cd "$(dirname "$0")/../.."
. .ci/container/podman-env.sh
version="$(bash .ci/container/get-node.sh --version)"
image="localhost/modelstub-ci-node-base:$version"
if podman image exists "$image"; then echo "$image"; exit 0; fi
node_bin="$(bash .ci/container/get-node.sh)"
node_dir="$(dirname "$(dirname "$node_bin")")"
# The npm that this Node release bundles (its CHANGELOG names each upgrade, latest first).
npm_version="$(grep -m1 -oE 'upgrade npm to [0-9]+\.[0-9]+\.[0-9]+' "$node_dir/CHANGELOG.md" | awk '{print $4}')"
[ -n "$npm_version" ] || { echo "make-base: cannot tell which npm Node $version bundles" >&2; exit 1; }
mirror="$(sed -nE 's/^URIs: *(http[^ ]*debian)\/?$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)"
[ -n "$mirror" ] || mirror="$(sed -nE 's/^deb +(http[^ ]*debian)\/? +bookworm .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -n 1)"
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

work="$(mktemp -d /var/tmp/modelstub-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
echo "make-base: debootstrap bookworm from $mirror, node $version, npm $npm_version" >&2
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
# Slim, as debian:bookworm-slim (its dpkg excludes): no apt lists or caches, docs, man pages or
# translations.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log \
  "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/lintian/*
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
cp "$node_bin" "$rootfs/usr/local/bin/node"
cp -r "$node_dir/include" "$rootfs/usr/local/include"
mkdir -p "$rootfs/usr/local/lib/node_modules"
(cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null && tar -xzf npm-*.tgz && mv package "$rootfs/usr/local/lib/node_modules/npm")
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
changes=(--change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" --change "ENV NODE_VERSION=$version" --change 'CMD ["node"]')
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  mkdir -p "$rootfs$(dirname "$NODE_EXTRA_CA_CERTS")"
  cp "$NODE_EXTRA_CA_CERTS" "$rootfs$NODE_EXTRA_CA_CERTS"
  changes+=(--change "ENV NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS")
fi
tar -C "$rootfs" -c . | podman import "${changes[@]}" - "$image" >/dev/null
echo "$image"
