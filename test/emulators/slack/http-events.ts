/**
 * Signed delivery to a bot's HTTP endpoint (Events API mode): events as JSON, interactions
 * as `payload=<json>` forms, slash commands as forms, each with Slack's v0 signature and,
 * for retries, X-Slack-Retry-Num / X-Slack-Retry-Reason.
 */
import { createHmac } from "node:crypto";
import { stringify } from "node:querystring";
import type { AckTiming } from "./state.ts";
import type { EnvelopeKind } from "./socket-mode.ts";

export interface HttpTarget {
  url: string;
  signingSecret: string;
}

export interface HttpDeliveryOptions {
  /** Sign with this secret instead of the right one (to test that the bot refuses it). */
  wrongSecret?: string;
  retryNum?: number;
  retryReason?: string;
  /** Seconds to shift the signed timestamp by (a stale request is refused by the bot). */
  timestampSkewSec?: number;
}

/** What the bot's endpoint answered. */
export interface HttpDeliveryResult {
  status: number;
  body: string;
  timing: AckTiming;
}

/** Slack's v0 request signature over `v0:<timestamp>:<body>`. */
export function slackSignature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

/** POSTs one event / interaction / command to the bot, signed, and measures how long it took to answer. */
export async function deliverOverHttp(target: HttpTarget, kind: EnvelopeKind, payload: unknown, options: HttpDeliveryOptions = {}): Promise<HttpDeliveryResult> {
  const body =
    kind === "events_api" ? JSON.stringify(payload)
    : kind === "interactive" ? stringify({ payload: JSON.stringify(payload) })
    : stringify(payload as Record<string, string>);
  const timestamp = Math.floor(Date.now() / 1000) + (options.timestampSkewSec ?? 0);
  const headers: Record<string, string> = {
    "content-type": kind === "events_api" ? "application/json" : "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": slackSignature(options.wrongSecret ?? target.signingSecret, timestamp, body),
  };
  if (options.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(options.retryNum);
    headers["x-slack-retry-reason"] = options.retryReason ?? "http_timeout";
  }
  const timing: AckTiming = { envelopeId: `http-${timestamp}-${Math.random().toString(36).slice(2)}`, kind, sentAt: Date.now() };
  const res = await fetch(target.url, { method: "POST", headers, body, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  timing.ackedAt = Date.now();
  timing.ms = timing.ackedAt - timing.sentAt;
  timing.ackPayload = text;
  return { status: res.status, body: text, timing };
}
