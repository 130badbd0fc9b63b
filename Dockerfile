# The service image: Node 24 runs the TypeScript sources directly (type stripping), so there is no build step.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY config ./config
USER 1000
EXPOSE 8080
ENTRYPOINT ["node", "bin/gpu-serials.ts"]
CMD ["run"]
