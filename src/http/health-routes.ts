/**
 * `GET /healthz` and `GET /readyz` on the shared HTTP server. `/healthz` answers 200 as long as the
 * process serves requests (a liveness probe: restart the process when it fails). `/readyz` answers
 * 200 when the bot is ready to take messages and 503 with the reasons otherwise (a readiness probe:
 * send it no traffic meanwhile), as JSON either way.
 */
import type { HttpRoutes } from "../ports.ts";
import type { Readiness } from "./readiness.ts";
import { sendJson } from "./server.ts";

export const HEALTH_PATH = "/healthz";
export const READY_PATH = "/readyz";

/** Mounts both routes; `readiness` decides what `/readyz` says. */
export function mountHealthRoutes(routes: HttpRoutes, readiness: Readiness): void {
  const bootedAt = Date.now();
  routes.mount("GET", HEALTH_PATH, (_req, res) => sendJson(res, 200, { status: "ok", uptimeSeconds: Math.round((Date.now() - bootedAt) / 1000) }));
  routes.mount("GET", READY_PATH, (_req, res) => {
    void readiness.report().then(
      (report) => sendJson(res, report.status === "ready" ? 200 : 503, report),
      (error: unknown) => sendJson(res, 503, { status: "not ready", reasons: [`readiness check failed: ${(error as Error).message}`], checks: {} }),
    );
  });
}
