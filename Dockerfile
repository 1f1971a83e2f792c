# The service's image, for docker-compose.yml (docs/scale-out.md). Node.js 24 LTS (docs/runtime.md).
FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY . .
RUN npm ci --no-audit --no-fund && make build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
# pg_dump: the scheduled backups and the upgrade's backup of a PostgreSQL database.
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client && rm -rf /var/lib/apt/lists/*
COPY --from=build /app /app
ENV NODE_ENV=production PORT=8000 HOST=0.0.0.0 DATA_DIR=/data
VOLUME /data
EXPOSE 8000
CMD ["node", "--max-semi-space-size=64", "dist/core/main.js"]
