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

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    MASTRA_TELEMETRY_DISABLED=1 \
    DATA_DIR=/data \
    API_HOST=0.0.0.0 \
    API_PORT=3001 \
    WEB_PORT=3000 \
    HOST=0.0.0.0
WORKDIR /app
# The API runs as one built file (apps/api/dist/main.mjs) that imports its packages from the
# workspace's node_modules; the web app runs from its self-contained build in apps/web/.output.
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000 3001
# Both processes of the default command: /api/health through the web app's proxy (compose.yaml
# sets a check of its own per service).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.WEB_PORT||3000)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "scripts/start.mjs"]
