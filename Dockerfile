# The service image. The build stage installs every dependency (npm ci runs the build, `prepare`) and
# compiles src/ and bin/ to JavaScript in dist/; the image holds dist/, the example config and the
# production dependencies only (installed without scripts: none needs one, and `prepare` would build):
# no TypeScript, no type stripping, no simulated cluster, no development tools. It runs as uid 1000.
FROM node:24-bookworm-slim AS build
WORKDIR /build
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY packages/kube-sim/package.json ./packages/kube-sim/package.json
COPY bin ./bin
COPY src ./src
RUN npm ci --no-audit --no-fund

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# 16 MB young-generation semi-spaces instead of V8's 64 MB: about 110 MB less peak RSS at 10,000 nodes for
# no measurable CPU (README, Benchmarks). deploy/base sets the same.
ENV NODE_OPTIONS=--max-semi-space-size=16
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /build/dist ./dist
COPY config ./config
USER 1000
EXPOSE 8080
ENTRYPOINT ["node", "dist/bin/gpu-serials.js"]
CMD ["run"]
