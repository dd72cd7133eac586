/**
 * Online checks for `status --deep` and `doctor`: one small HTTP call per platform or endpoint,
 * with a short timeout, answering how long it took or why it failed (network failures are named
 * as such, never as a bad token). Tokens travel only in headers or the URL path and never reach
 * the text these functions return.
 */
import { z } from "zod";
import { scrubSecrets } from "../observe/scrub.ts";

/** What one probe found. `detail` is a short human sentence (what answered, or what went wrong). */
export interface ProbeResult {
  name: string;
  ok: boolean;
  ms: number;
  detail: string;
  /** True when the endpoint could not be reached at all (refused, DNS, timeout). */
  unreachable?: boolean;
}

/** Default per-probe timeout. */
export const PROBE_TIMEOUT_MS = 3000;

interface HttpAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  ms: number;
}

type Fetched = { ok: true; answer: HttpAnswer } | { ok: false; ms: number; problem: string };

/** Why a fetch failed, in words: timeout, refused, unknown host, or the error's own message. */
export function networkProblem(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return `no answer within ${timeoutMs} ms`;
  const code = e?.cause?.code;
  if (code === "ECONNREFUSED") return "connection refused (nothing listens there)";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host name not found (DNS)";
  if (code === "ECONNRESET") return "connection reset";
  if (code && /CERT|SSL|TLS/.test(code)) return `TLS problem (${code})`;
  return e?.cause?.message ?? e?.message ?? String(err);
}

async function fetchJson(url: string, init: RequestInit, timeoutMs: number): Promise<Fetched> {
  const started = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (an HTML error page, a proxy): keep the text for the message.
    }
    return { ok: true, answer: { status: res.status, headers: res.headers, body, ms: Math.round(performance.now() - started) } };
  } catch (err) {
    return { ok: false, ms: Math.round(performance.now() - started), problem: scrubSecrets(networkProblem(err, timeoutMs)) };
  }
}

const withSlash = (url: string) => (url.endsWith("/") ? url : `${url}/`);
const noSlash = (url: string) => url.replace(/\/+$/, "");
const origin = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

function unreachable(name: string, url: string, f: { ms: number; problem: string }): ProbeResult {
  return { name, ok: false, ms: f.ms, detail: `cannot reach ${origin(url)}: ${f.problem}`, unreachable: true };
}

function unexpected(name: string, answer: HttpAnswer, what: string): ProbeResult {
  const text = typeof answer.body === "string" ? answer.body.slice(0, 80) : JSON.stringify(answer.body).slice(0, 80);
  return { name, ok: false, ms: answer.ms, detail: scrubSecrets(`${what} answered HTTP ${answer.status}: ${text}`) };
}

/** The Slack Web API base; SLACK_API_URL overrides it (ends with `/api/`). */
export const DEFAULT_SLACK_API = "https://slack.com/api/";
/** The Telegram Bot API root; TELEGRAM_API_ROOT overrides it. */
export const DEFAULT_TELEGRAM_API = "https://api.telegram.org";
/** The Discord REST base (the version is appended); DISCORD_API_URL overrides it. */
export const DEFAULT_DISCORD_API = "https://discord.com/api";
/** The model endpoint when only an API key is set. */
export const DEFAULT_MODEL_API = "https://api.openai.com/v1";

const SlackAuthSchema = z.looseObject({ ok: z.boolean(), error: z.string().optional(), user: z.string().optional(), team: z.string().optional() });

/** Slack `auth.test`: whether the bot token works; `scopes` from the `x-oauth-scopes` header when Slack sends it. */
export async function probeSlack(apiUrl: string, botToken: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult & { scopes?: string[] }> {
  const url = `${withSlash(apiUrl)}auth.test`;
  const f = await fetchJson(url, { method: "POST", headers: { authorization: `Bearer ${botToken}`, "content-type": "application/x-www-form-urlencoded" } }, timeoutMs);
  if (!f.ok) return unreachable("slack", url, f);
  const body = SlackAuthSchema.safeParse(f.answer.body);
  if (!body.success) return unexpected("slack", f.answer, "auth.test");
  if (!body.data.ok) return { name: "slack", ok: false, ms: f.answer.ms, detail: `auth.test refused the bot token: ${body.data.error ?? "unknown error"}` };
  const header = f.answer.headers.get("x-oauth-scopes");
  const scopes = header === null ? undefined : header.split(",").map((s) => s.trim()).filter(Boolean);
  return { name: "slack", ok: true, ms: f.answer.ms, detail: `auth.test: ${body.data.user ?? "bot"} in ${body.data.team ?? "workspace"}`, scopes };
}

const TelegramSchema = z.looseObject({ ok: z.boolean(), description: z.string().optional(), result: z.unknown().optional() });

async function telegramCall(apiRoot: string, token: string, method: string, timeoutMs: number) {
  const url = `${noSlash(apiRoot)}/bot${token}/${method}`;
  const f = await fetchJson(url, { method: "GET" }, timeoutMs);
  if (!f.ok) return { failed: unreachable("telegram", apiRoot, f) };
  const body = TelegramSchema.safeParse(f.answer.body);
  if (!body.success) return { failed: unexpected("telegram", f.answer, method) };
  if (!body.data.ok) {
    const why = body.data.description ?? `HTTP ${f.answer.status}`;
    return { failed: { name: "telegram", ok: false, ms: f.answer.ms, detail: `${method} refused: ${why}` } as ProbeResult };
  }
  return { ms: f.answer.ms, result: body.data.result };
}

/**
 * Telegram `getMe`: whether the bot token works, and whether the bot reads every group message
 * (`readsAllGroupMessages` false: BotFather's privacy mode is on).
 */
export async function probeTelegram(apiRoot: string, token: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult & { readsAllGroupMessages?: boolean }> {
  const r = await telegramCall(apiRoot, token, "getMe", timeoutMs);
  if (r.failed) return r.failed;
  const me = z.looseObject({ username: z.string().optional(), can_read_all_group_messages: z.boolean().optional() }).safeParse(r.result);
  return {
    name: "telegram", ok: true, ms: r.ms, detail: `getMe: @${me.success ? (me.data.username ?? "?") : "?"}`,
    ...(me.success && me.data.can_read_all_group_messages !== undefined ? { readsAllGroupMessages: me.data.can_read_all_group_messages } : {}),
  };
}

/** Telegram `getWebhookInfo`: the webhook URL Telegram has on record ("" when none), or the failure. */
export async function telegramWebhook(apiRoot: string, token: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<{ url: string } | { failed: ProbeResult }> {
  const r = await telegramCall(apiRoot, token, "getWebhookInfo", timeoutMs);
  if (r.failed) return { failed: r.failed };
  const info = z.looseObject({ url: z.string() }).safeParse(r.result);
  return { url: info.success ? info.data.url : "" };
}

async function discordGet(apiUrl: string, token: string, route: string, timeoutMs: number): Promise<Fetched> {
  return fetchJson(`${noSlash(apiUrl)}/v10${route}`, { headers: { authorization: `Bot ${token}` } }, timeoutMs);
}

/** Discord `GET /users/@me` and `GET /gateway/bot`: whether the token works and the gateway is offered. */
export async function probeDiscord(apiUrl: string, token: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const me = await discordGet(apiUrl, token, "/users/@me", timeoutMs);
  if (!me.ok) return unreachable("discord", apiUrl, me);
  if (me.answer.status === 401) return { name: "discord", ok: false, ms: me.answer.ms, detail: "GET /users/@me: 401, the bot token is not valid (Bot → Reset Token)" };
  if (me.answer.status !== 200) return unexpected("discord", me.answer, "GET /users/@me");
  const gateway = await discordGet(apiUrl, token, "/gateway/bot", timeoutMs);
  if (!gateway.ok) return unreachable("discord", apiUrl, gateway);
  if (gateway.answer.status !== 200) return unexpected("discord", gateway.answer, "GET /gateway/bot");
  const user = z.looseObject({ username: z.string().optional() }).safeParse(me.answer.body);
  const name = user.success ? (user.data.username ?? "?") : "?";
  return { name: "discord", ok: true, ms: me.answer.ms + gateway.answer.ms, detail: `users/@me: ${name}; gateway/bot answered` };
}

/** Discord `GET /applications/@me` flags (and the application id, for the invite URL), or why they could not be read. */
export async function discordApplicationFlags(apiUrl: string, token: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<{ flags: number; id?: string } | { failed: ProbeResult }> {
  const app = await discordGet(apiUrl, token, "/applications/@me", timeoutMs);
  if (!app.ok) return { failed: unreachable("discord", apiUrl, app) };
  if (app.answer.status !== 200) return { failed: unexpected("discord", app.answer, "GET /applications/@me") };
  const body = z.looseObject({ flags: z.number().int(), id: z.string().optional() }).safeParse(app.answer.body);
  if (!body.success) return { failed: unexpected("discord", app.answer, "GET /applications/@me (no flags)") };
  return { flags: body.data.flags, ...(body.data.id ? { id: body.data.id } : {}) };
}

/** The model endpoint's `GET <baseURL>/models`. */
export async function probeModel(baseURL: string, apiKey: string | undefined, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const url = `${noSlash(baseURL)}/models`;
  const f = await fetchJson(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} }, timeoutMs);
  if (!f.ok) return unreachable("model", url, f);
  if (f.answer.status === 401 || f.answer.status === 403) {
    return { name: "model", ok: false, ms: f.answer.ms, detail: `GET /models: ${f.answer.status}, the endpoint refused the API key (OPENAI_API_KEY)` };
  }
  if (f.answer.status !== 200) return unexpected("model", f.answer, "GET /models");
  const list = z.looseObject({ data: z.array(z.looseObject({ id: z.string() })) }).safeParse(f.answer.body);
  const ids = list.success ? list.data.data.map((m) => m.id) : [];
  const shown = ids.slice(0, 3).join(", ") + (ids.length > 3 ? ", …" : "");
  return { name: "model", ok: true, ms: f.answer.ms, detail: `GET /models: ${ids.length} model${ids.length === 1 ? "" : "s"}${ids.length ? ` (${shown})` : ""}` };
}
