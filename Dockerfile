# syntax=docker/dockerfile:1
# The service's image: the API by default, the job workers with `node dist/worker.js`, the migrations with
# `node dist/cli/migrate.js` (compose.yaml runs all three). docs/docker.md says how to build and run it.

# Debian (glibc) slim, the Node.js of README's recommended runtime; both stages on the same image, so that
# the production dependencies installed in the first run in the second.
ARG NODE_IMAGE=node:24-trixie-slim

# The build, with the whole toolchain. Its one step is scripts/production-install.sh, which the tests run in
# a clean clone: it leaves in /app the compiled code, the migrations and the production dependencies only.
# npm's cache is kept between builds, so a change to the sources installs from it.
FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY . .
RUN --mount=type=cache,target=/root/.npm sh scripts/production-install.sh /app

# What runs: no type checker, test runner, browser or edge runtime. The code belongs to root and is read-only to
# the service's user (node, uid 1000), which writes only DATA_DIR (local object storage when S3 is not set).
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
RUN mkdir /data && chown node:node /data
USER node
EXPOSE 3000
# The image has no curl: node asks /status/ready itself (503 while draining after SIGTERM, or while the
# database or the job queue is down). A worker serves no HTTP: compose.yaml turns this check off for it.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/status/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is the container's process, with no shell or npm in between: `docker stop`'s SIGTERM reaches
# it, and it drains (SHUTDOWN_DELAY_MS, then in-flight requests and jobs) and exits 0. Give the container
# longer than SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS (15 s by default) to stop: `docker stop -t 20`.
CMD ["node", "--enable-source-maps", "dist/main.js"]
