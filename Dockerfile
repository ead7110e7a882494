# modelstub: a deterministic, scripted stand-in for a language model, over gRPC.
#
#   docker build -t modelstub .
#   docker run --rm -p 50051:50051 -v "$PWD/scripts:/scripts:ro" \
#     -v "$PWD/episodes:/episodes" -e MODELSTUB_RECORD_DIR=/episodes \
#     -e MODELSTUB_SCRIPT=/scripts/agent.yaml -e MODELSTUB_CONTROL_TOKEN=change-me modelstub
#
# .ci/docker-check.mjs carries out these steps without a Docker engine: keep its expectations
# (stages named build and runtime, one instruction per line, exec-form ENTRYPOINT, CMD and
# HEALTHCHECK; absolute paths in a RUN step are taken inside the image) when editing.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json rolldown.config.mjs ./
COPY gen ./gen
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
# Bind every interface inside the container; publish the port with -p. ControlService then
# requires MODELSTUB_CONTROL_TOKEN (modelstub refuses to start without one).
ENV MODELSTUB_GRPC=0.0.0.0:50051
# Shutdown grace under `docker stop`'s 10 s: calls still running at 5 s are cut off and every
# episode is written before Docker's SIGKILL (give `docker stop -t` more to raise it).
ENV MODELSTUB_GRACE=5s
# Scripts: mount a folder at /scripts and point MODELSTUB_SCRIPT at a file in it; without
# MODELSTUB_SCRIPT the built-in default script is served.
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/bundle ./dist/bundle
COPY bin ./bin
COPY examples ./examples
# Episodes: the image runs as `node`, so the one place it may write is made its own. Mount a
# host folder here and set MODELSTUB_RECORD_DIR=/episodes to keep them.
RUN mkdir /episodes && chown node:node /episodes
USER node
EXPOSE 50051
# `modelstub health` probes what MODELSTUB_GRPC names (0.0.0.0 on the loopback), over TLS when
# MODELSTUB_TLS_CERT is set: overriding either at `docker run` needs no new HEALTHCHECK.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "bin/modelstub.js", "health"]
ENTRYPOINT ["node", "bin/modelstub.js"]
CMD ["serve"]
