# syntax=docker/dockerfile:1
# One image for both processes of the app; compose.yaml runs it twice (API and web app), each
# under its own restart policy and health check. Without a command it runs scripts/start.mjs,
# which starts both in one container and restarts either one after a crash.

FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1 NUXT_TELEMETRY_DISABLED=1
# The whole workspace first: the web app's postinstall (`nuxt prepare`) needs its sources.
COPY . .
RUN npx -y pnpm@12.4.2 install --frozen-lockfile \
 && npx -y pnpm@12.4.2 --filter @chat/web --filter @chat/api run build

# The API's production dependencies alone: none of the build's or the tests' tools.
FROM node:24-bookworm-slim AS api-packages
WORKDIR /app
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY patches ./patches
COPY apps/api/package.json apps/api/
COPY packages/db/package.json packages/db/
COPY packages/contracts/package.json packages/contracts/
RUN npx -y pnpm@12.4.2 install --prod --frozen-lockfile --filter "@chat/api..."

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    MASTRA_TELEMETRY_DISABLED=1 \
    DATA_DIR=/data \
    API_HOST=0.0.0.0 \
    API_PORT=3001 \
    WEB_PORT=3000 \
    HOST=0.0.0.0
WORKDIR /app
# Only what runs, in the workspace's layout (the API finds its migrations and its document reader
# relative to its bundle): the API as built (apps/api/dist: main.mjs and its chunks) with its production
# packages, the document reader it starts as a process of its own, the database's migrations, the
# web app's self-contained build (apps/web/.output), and the start script.
COPY --from=api-packages /app /app
COPY --from=build /app/apps/api/dist apps/api/dist
COPY --from=build /app/apps/api/nodeFlags.mjs apps/api/
COPY --from=build /app/apps/api/src/chats/attachments/*.mjs apps/api/src/chats/attachments/
COPY --from=build /app/packages/db/drizzle packages/db/drizzle
COPY --from=build /app/packages/contracts/src/backoff.mjs packages/contracts/src/
COPY --from=build /app/apps/web/.output apps/web/.output
COPY --from=build /app/scripts/start.mjs /app/scripts/envFile.mjs scripts/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000 3001
# Both processes of the default command: /api/health through the web app's proxy (compose.yaml
# sets a check of its own per service).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.WEB_PORT||3000)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "scripts/start.mjs"]
