# modelstub: a deterministic, scripted stand-in for a language model, over gRPC and HTTP.
#
#   docker build -t modelstub .
#   docker run --rm -p 127.0.0.1:50051:50051 -p 127.0.0.1:8080:8080 \
#     -v "$PWD/examples:/scripts:ro" -e MODELSTUB_SCRIPT=/scripts/streaming.yaml \
#     -e MODELSTUB_CONTROL_TOKEN=change-me modelstub
#
# docs/container.md documents the image: ports, mounts, variables, health, shutdown, CI recipes.
# CI (.ci/run.d/30-container.sh) builds this file with podman and runs it, substituting
# NODE_IMAGE with a base made locally (Debian bookworm + the official node binary of the same
# version, .ci/container/make-base.sh): keep the version in NODE_IMAGE's default exact
# (node:X.Y.Z-bookworm-slim), since CI reads it from there.

# The current Node LTS on Debian slim. Pinned to a release, so a rebuild is the same Node.
ARG NODE_IMAGE=node:24.22.3-bookworm-slim

# Build: dev dependencies, TypeScript and the bundle; then the production dependencies only.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json rolldown.config.mjs ./
COPY gen ./gen
COPY src ./src
# The build also runs the CLI (bin/) once, to write the script schema.
COPY bin ./bin
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# The runtime tree: Node and the shared libraries it links (as `ldd` names them), the two users,
# and the app; nothing else of the base (no shell, no package manager, no npm). Node alone is
# 122 MB, a Debian slim base another 75 MB: this keeps the image at Node plus about 35 MB.
# Merged-/usr bases keep /lib and /lib64 as links into /usr, and the tree keeps them so.
FROM ${NODE_IMAGE} AS tree
RUN set -eu; r=/rootfs; \
    mkdir -p "$r/usr/local/bin" "$r/etc" "$r/tmp" "$r/scripts" "$r/episodes" "$r/app"; \
    cp /usr/local/bin/node "$r/usr/local/bin/"; \
    for f in $(ldd /usr/local/bin/node | grep -o '/[^ ]*'); do \
      d="$(readlink -f "$(dirname "$f")")"; mkdir -p "$r$d"; cp -L "$f" "$r$d/"; \
    done; \
    for l in /lib /lib64; do if [ -L "$l" ]; then ln -s "$(readlink "$l")" "$r$l"; fi; done; \
    cp /etc/ld.so.cache "$r/etc/"; \
    grep -E '^(root|node):' /etc/passwd > "$r/etc/passwd"; \
    grep -E '^(root|node):' /etc/group > "$r/etc/group"; \
    chmod 1777 "$r/tmp"; chown node:node "$r/episodes"
WORKDIR /rootfs/app
COPY package.json ./
COPY bin ./bin
COPY examples ./examples
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/bundle ./dist/bundle

FROM scratch AS runtime
COPY --from=tree /rootfs /
# package.json's version: CI fails when the two differ. SOURCE: the repository's address.
ARG VERSION=0.1.0
ARG SOURCE=unknown
ARG NODE_IMAGE
LABEL org.opencontainers.image.title="modelstub" \
      org.opencontainers.image.description="A deterministic, scripted stand-in for a language model, over gRPC and the OpenAI HTTP dialect" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production
# gRPC on every interface of the container, the OpenAI-compatible HTTP front beside it. Off
# loopback both require MODELSTUB_CONTROL_TOKEN (modelstub refuses to start without one), and
# every HTTP request must then send it as `authorization: Bearer TOKEN` (an OpenAI SDK's apiKey).
# `-e MODELSTUB_HTTP=` turns the HTTP front off.
ENV MODELSTUB_GRPC=0.0.0.0:50051 \
    MODELSTUB_HTTP=0.0.0.0:8080
EXPOSE 50051 8080
# Scripts: mount a folder at /scripts and point MODELSTUB_SCRIPT at a file in it; without
# MODELSTUB_SCRIPT the built-in default script is served. Episodes are written to /episodes at
# shutdown (the one folder the `node` user owns): mount a folder writable by uid 1000 there.
ENV MODELSTUB_RECORD_DIR=/episodes
# Shutdown grace under `docker stop`'s 10 s: calls still running at 3 s are cut off (UNAVAILABLE),
# and the 7 s left are for writing every episode before the engine's SIGKILL: with 1,000
# sessions, each with a call in flight, CI's stop took 4.9-6.3 s on a loaded 2-core machine
# (docs/container.md, "Stopping"). For a longer grace raise `docker stop -t` as much.
# Node is PID 1 and handles SIGTERM itself (no init needed: modelstub starts no children).
ENV MODELSTUB_GRACE=3s
STOPSIGNAL SIGTERM
USER node
WORKDIR /app
# `modelstub health` probes what MODELSTUB_GRPC names (0.0.0.0 on the loopback), over TLS when
# MODELSTUB_TLS_CERT is set: overriding either at `docker run` needs no new HEALTHCHECK.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "bin/modelstub.js", "health"]
ENTRYPOINT ["node", "bin/modelstub.js"]
CMD ["serve"]
