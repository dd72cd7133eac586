#!/usr/bin/env node
// The container's health check (Dockerfile HEALTHCHECK, compose): asks the bot's own HTTP server for
// GET /healthz on PORT and exits 0 when it answers 200, 1 otherwise. Plain JavaScript, no dependencies.
const port = process.env.PORT || "3000";
const bound = process.env.HOST;
const host = !bound || bound === "0.0.0.0" || bound === "::" ? "127.0.0.1" : bound.includes(":") ? `[${bound}]` : bound;
const path = process.argv[2] || "/healthz";

try {
  const res = await fetch(`http://${host}:${port}${path}`, { signal: AbortSignal.timeout(3000) });
  process.exit(res.status === 200 ? 0 : 1);
} catch (error) {
  process.stderr.write(`healthcheck: http://${host}:${port}${path}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
