# The service image. The build stage installs every dependency (npm ci runs the build, `prepare`),
# compiles src/ and bin/ to JavaScript in dist/ (the simulated cluster's sources are there only because
# the demo command's import of it is type-checked) and bundles the command line into dist/bin
# (scripts/bundle-cli.ts); the image holds dist/, the example config and the production dependencies only
# (installed without scripts: none needs one, and `prepare` would build): no TypeScript, no type
# stripping, no simulated cluster, no development tools, no npm cache. It runs as uid 1000.
#
# The base image is pinned by digest, so every build gets the same Node and Debian. To take a newer one
# (security fixes), read the tag's current digest and put it in both FROM lines and the base.digest label:
#   docker buildx imagetools inspect node:24-bookworm-slim    (the "Digest:" line)
FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS build
WORKDIR /build
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY packages/kube-sim/package.json ./packages/kube-sim/package.json
COPY packages/kube-sim/src ./packages/kube-sim/src
COPY bin ./bin
COPY src ./src
COPY scripts/bundle-cli.ts ./scripts/bundle-cli.ts
RUN npm ci --no-audit --no-fund

FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
# Set by the build: docker build --build-arg REVISION="$(git rev-parse HEAD)" --build-arg CREATED="$(date -u +%FT%TZ)"
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="gpu-serials" \
      org.opencontainers.image.description="Tells GPU fleet owners where every physical GPU is: reads nvidia-smi in the NVIDIA device-plugin pods of a Kubernetes cluster and exports GPU identity records." \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim" \
      org.opencontainers.image.base.digest="sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d"
WORKDIR /app
ENV NODE_ENV=production
# jemalloc (Debian's libjemalloc2, pinned) in place of glibc's malloc, with 2 arenas and the pages it frees
# handed back to the system after a second. glibc's malloc kept the memory the threads freed in its arenas
# (with its defaults the RSS rose 0.2-0.3 MB/min for hours over a flat heap); jemalloc holds 8-35 MB less at
# the peak of a 10,000-node sync than glibc with 2 arenas and a fixed mmap threshold, at the same CPU, and
# its RSS stays flat over a long run (docs/benchmarks.md, "A long soak"; `npm run bench` runs the service
# with the LD_PRELOAD and MALLOC_ settings written here, one a line). The link gives both architectures
# one path.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2=5.3.0-1 \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
ENV MALLOC_CONF=narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /build/dist ./dist
COPY config ./config
# Numeric, so that the kubelet can check runAsNonRoot against it (the image's `node` user is uid 1000).
USER 1000:1000
EXPOSE 8080
# V8 heap options (docs/benchmarks.md; `npm run bench` runs the service with the flags written here):
# 8 MB young-generation semi-spaces instead of V8's 64 MB, and a full collection once the old generation
# has grown 15% past what the last one left live, instead of V8's adaptive factor (up to 4x). At 10,000
# nodes the peak RSS drops from 393 MB (V8's defaults) to 262 MB with 16 MB and 35%, and by about 30 MB
# more with 8 MB and 20%, for a few tenths of a ms more CPU per reading; 15% takes about 8 MB more off
# the peak at 50,000 nodes. The limit follows the live heap, so a larger fleet is never cut short.
# --heap-growing-percent is refused in NODE_OPTIONS, hence the command line.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=15", "dist/bin/gpu-serials.js"]
CMD ["run"]
