# syntax=docker/dockerfile:1
# The Flex production image, used by docker-compose.yml. The app is stateless: point DATABASE_URL
# at PostgreSQL (the compose file does) and run as many instances as you like (docs/architecture.md,
# "Scale-out"). Node 24 is the current LTS. The one uWebSockets.js build the app trusts has
# binaries up to Node 20 only, so here HTTP_SERVER=auto (the default) runs node:http, and the
# start-up log says so (docs/architecture.md, "HTTP server" and "Native dependencies"). No other
# native code loads into the process; PostgreSQL is the compose file's own server.

# ---- build: all dependencies, TypeScript → dist/, the console → dist/console ----
FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
COPY console ./console
RUN npm run build \
 && mkdir -p /out \
 && find src -name '*.sql' -exec cp --parents {} /out/ \;

# ---- runtime: production dependencies only, compiled code, migrations, non-root ----
FROM node:24-trixie-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data MQTT_HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Migrations are read from src/<domain>/migrations at start.
COPY --from=build /out/src ./src
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080 1883
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
