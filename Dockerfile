# The production image of the subgraph: `docker build -t bank-subgraph .` from a clean clone.
# Every base comes from a build argument, so a mirror (or a Node 24 image built in-house) can stand in:
#   docker build --build-arg NODE_IMAGE=registry.example.com/library/node:24-bookworm-slim .
# and npm's registry from another (NPM_CONFIG_REGISTRY).
# docs/deployment.md says how to run it and what each setting is for.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=${NODE_IMAGE}

# Production dependencies only. The `node` devDependency, which pins Node for npm scripts on a
# developer's machine, stays out with the rest: the image runs on its base's Node. No install script
# runs: nothing the subgraph needs builds native code (SQLite is node:sqlite).
FROM ${NODE_IMAGE} AS dependencies
# An npm registry mirror, where the public registry is out of reach.
ARG NPM_CONFIG_REGISTRY=https://registry.npmjs.org/
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
# The SQLite default's directory, made here so the last stage runs no command: RUNTIME_IMAGE may be
# a Node 24 image without a shell.
RUN mkdir data

FROM ${RUNTIME_IMAGE}
# Production rules from the start: whatever is not configured stops the start, naming it.
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the service: it runs TypeScript as shipped, on Node's type stripping,
# so the source is the program; nothing here is written at run time.
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY schema ./schema
COPY src ./src
# The SQLite default (sqlite:./data/collections.db) writes here, and only here besides /tmp, so the
# root filesystem can be mounted read-only.
COPY --from=dependencies --chown=1000:1000 /app/data ./data
VOLUME ["/app/data"]
# Numeric, so Kubernetes' runAsNonRoot can check it: uid 1000 is the base image's `node` user.
USER 1000:1000
# PORT's default; the webhook's own port (WEBHOOK_PORT) is whatever the deployment sets.
EXPOSE 4001
# Node itself is PID 1 (no npm, no shell, no base's entrypoint script in between), so SIGTERM reaches
# the drain and its exit code (0 once drained) is the container's.
STOPSIGNAL SIGTERM
ENTRYPOINT []
CMD ["node", "src/main.ts"]
