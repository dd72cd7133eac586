# Gatehouse: the bot, as `npm start` runs it. Configure it with environment variables (see .env.example)
# and, for policy and approvals, a config file named by GATEHOUSE_CONFIG (mount it, e.g. at /config).
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production GATEHOUSE_DATA_DIR=/data
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY src ./src
COPY adapters ./adapters
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
CMD ["node", "src/cli.ts", "start"]
