/**
 * The emulated Slack Web API (`POST /api/<method>`), with Slack's auth rules, argument
 * checks, limits and error shapes, plus the `response_url` endpoints of interactions.
 * Every call is recorded in the world, whatever it answered.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import { z } from "zod";
import type { SlackWorld } from "./state.ts";
import { blocksProblem } from "./blocks.ts";
import { APP_TOKEN_SCOPES, scopeHeaders, scopeNeeded } from "./scopes.ts";

/** Slack accepts at most this many characters of `text`. */
export const MAX_TEXT_CHARS = 40_000;

type Args = Record<string, unknown>;
type Answer = { status?: number; headers?: Record<string, string>; body: Record<string, unknown> };
type TokenKind = "bot" | "app";

const ok = (body: Record<string, unknown> = {}): Answer => ({ body: { ok: true, ...body } });
const fail = (error: string, extra: Record<string, unknown> = {}): Answer => ({ body: { ok: false, error, ...extra } });

/** Fields that arrive JSON-encoded inside form bodies. */
const JSON_FIELDS = ["blocks", "attachments", "metadata"];

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseArgs(raw: string, contentType: string | undefined): Args | undefined {
  if (!raw) return {};
  if (contentType?.startsWith("application/json")) {
    try {
      const v: unknown = JSON.parse(raw);
      return v && typeof v === "object" ? (v as Args) : undefined;
    } catch {
      return undefined;
    }
  }
  const args: Args = { ...parseQuery(raw) };
  for (const f of JSON_FIELDS) {
    if (typeof args[f] === "string") {
      try {
        args[f] = JSON.parse(args[f] as string);
      } catch {
        return undefined;
      }
    }
  }
  return args;
}

const MessageArgs = z.object({
  channel: z.string().min(1),
  text: z.string().optional(),
  blocks: z.array(z.unknown()).optional(),
  thread_ts: z.string().optional(),
});
const UpdateArgs = MessageArgs.extend({ ts: z.string().min(1) });
const EphemeralArgs = MessageArgs.extend({ user: z.string().min(1) });
const StatusArgs = z.object({ channel_id: z.string().min(1), thread_ts: z.string().min(1), status: z.string() });
const UsersInfoArgs = z.object({ user: z.string().min(1) });
const RepliesArgs = z.object({ channel: z.string().min(1), ts: z.string().min(1) });
const PermalinkArgs = z.object({ channel: z.string().min(1), message_ts: z.string().min(1) });

/** Text/blocks checks shared by postMessage, update and postEphemeral. */
function contentProblem(args: z.infer<typeof MessageArgs>): Answer | undefined {
  if (!args.text && !args.blocks?.length) return fail("no_text");
  if ((args.text?.length ?? 0) > MAX_TEXT_CHARS) return fail("msg_too_long");
  if (args.blocks) {
    const why = blocksProblem(args.blocks);
    if (why) return fail("invalid_blocks", { errors: [why] });
  }
  return undefined;
}

/** Runs one Web API method against the world. */
function runMethod(world: SlackWorld, method: string, args: Args, kind: TokenKind, socketUrl: () => string): Answer {
  if (method === "apps.connections.open") {
    if (kind !== "app") return fail("not_allowed_token_type");
    return ok({ url: socketUrl() });
  }
  if (kind !== "bot") return fail("not_allowed_token_type");
  switch (method) {
    case "auth.test":
      return ok({
        url: "https://emulated.slack.com/", team: "Emulated", user: "gatehouse", team_id: world.teamId,
        user_id: world.botUserId, bot_id: world.botId, is_enterprise_install: false,
      });
    case "users.info": {
      const a = UsersInfoArgs.safeParse(args);
      if (!a.success) return fail("invalid_arguments");
      const u = world.users.get(a.data.user);
      if (!u) return fail("user_not_found");
      return ok({
        user: {
          id: u.id, team_id: world.teamId, name: u.name, real_name: u.realName ?? u.name, is_bot: Boolean(u.isBot),
          is_admin: Boolean(u.isAdmin), is_owner: Boolean(u.isOwner), is_primary_owner: false, is_restricted: false, is_ultra_restricted: false,
          profile: { display_name: u.name, real_name: u.realName ?? u.name },
        },
      });
    }
    case "chat.postMessage": {
      const a = MessageArgs.safeParse(args);
      if (!a.success) return fail(args.channel ? "invalid_arguments" : "channel_not_found");
      if (world.channelsWithoutBot.has(a.data.channel)) return fail("not_in_channel");
      if (!world.channels.has(a.data.channel)) return fail("channel_not_found");
      const bad = contentProblem(a.data);
      if (bad) return bad;
      if (a.data.thread_ts && !world.findMessage(a.data.channel, a.data.thread_ts)) return fail("thread_not_found");
      // A reply from the app clears its status in that thread.
      if (a.data.thread_ts) world.threadStatuses.delete(`${a.data.channel}:${a.data.thread_ts}`);
      const ts = world.nextTs();
      world.addMessage({
        channel: a.data.channel, ts, threadTs: a.data.thread_ts, user: world.botUserId, botId: world.botId,
        text: a.data.text ?? "", blocks: a.data.blocks,
      });
      return ok({ channel: a.data.channel, ts, message: { type: "message", text: a.data.text ?? "", user: world.botUserId, ts, thread_ts: a.data.thread_ts } });
    }
    case "chat.update": {
      const a = UpdateArgs.safeParse(args);
      if (!a.success) return fail("invalid_arguments");
      if (!world.channels.has(a.data.channel)) return fail("channel_not_found");
      const msg = world.findMessage(a.data.channel, a.data.ts);
      if (!msg) return fail("message_not_found");
      if (msg.user !== world.botUserId) return fail("cant_update_message");
      const bad = contentProblem(a.data);
      if (bad) return bad;
      const wait = world.takeUpdateSlot();
      if (wait !== undefined) return { status: 429, headers: { "retry-after": String(wait) }, body: { ok: false, error: "ratelimited" } };
      msg.text = a.data.text ?? "";
      msg.blocks = a.data.blocks;
      msg.edited = true;
      world.changed();
      return ok({ channel: msg.channel, ts: msg.ts, text: msg.text });
    }
    case "chat.postEphemeral": {
      const a = EphemeralArgs.safeParse(args);
      if (!a.success) return fail("invalid_arguments");
      if (!world.channels.has(a.data.channel)) return fail("channel_not_found");
      if (!world.users.has(a.data.user)) return fail("user_not_in_channel");
      const bad = contentProblem(a.data);
      if (bad) return bad;
      world.ephemerals.push({ channel: a.data.channel, user: a.data.user, threadTs: a.data.thread_ts, text: a.data.text ?? "", via: "chat.postEphemeral", at: Date.now() });
      world.changed();
      return ok({ message_ts: world.nextTs() });
    }
    case "assistant.threads.setStatus": {
      const a = StatusArgs.safeParse(args);
      if (!a.success) return fail("invalid_arguments");
      if (!world.channels.has(a.data.channel_id)) return fail("channel_not_found");
      const key = `${a.data.channel_id}:${a.data.thread_ts}`;
      if (a.data.status) world.threadStatuses.set(key, a.data.status);
      else world.threadStatuses.delete(key);
      world.changed();
      return ok();
    }
    case "chat.getPermalink": {
      const a = PermalinkArgs.safeParse(args);
      if (!a.success) return fail("invalid_arguments");
      if (!world.channels.has(a.data.channel)) return fail("channel_not_found");
      const msg = world.findMessage(a.data.channel, a.data.message_ts);
      if (!msg) return fail("message_not_found");
      const thread = msg.threadTs ? `?thread_ts=${msg.threadTs}&cid=${msg.channel}` : "";
      return ok({ channel: msg.channel, permalink: `https://emulated.slack.com/archives/${msg.channel}/p${msg.ts.replace(".", "")}${thread}` });
    }
    case "conversations.replies": {
      const a = RepliesArgs.safeParse(args);
      if (!a.success) return fail("invalid_arguments");
      if (!world.channels.has(a.data.channel)) return fail("channel_not_found");
      const msgs = world.messages
        .filter((m) => m.channel === a.data.channel && (m.ts === a.data.ts || m.threadTs === a.data.ts))
        .map((m) => ({ type: "message", ts: m.ts, thread_ts: m.threadTs, user: m.user, bot_id: m.botId, text: m.text }));
      return ok({ messages: msgs, has_more: false });
    }
    case "views.open": {
      const r = world.views.open(args);
      if ("error" in r) return fail(r.error, r.extra);
      world.changed();
      return ok({ view: { id: r.view.id, team_id: world.teamId, type: "modal", ...r.view.raw, state: { values: {} }, root_view_id: r.view.id, app_id: world.appId, bot_id: world.botId } });
    }
    case "usergroups.list":
    case "usergroups.users.list": {
      const r = method === "usergroups.list" ? world.userGroups.list(args) : world.userGroups.usersList(args);
      return r.error ? fail(r.error) : ok(r.body);
    }
    default:
      return fail("unknown_method");
  }
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status ?? 200, { "content-type": "application/json; charset=utf-8", ...answer.headers });
  res.end(JSON.stringify(answer.body));
}

/** Handles `POST /api/<method>`. */
export async function handleWebApi(world: SlackWorld, req: IncomingMessage, res: ServerResponse, method: string, socketUrl: () => string): Promise<void> {
  const raw = await readBody(req);
  const args = parseArgs(raw, req.headers["content-type"]);
  const bearer = /^Bearer\s+(\S+)$/.exec(req.headers.authorization ?? "")?.[1];
  const token = bearer ?? (typeof args?.token === "string" ? args.token : undefined);
  const record = (result: string) => {
    const { token: _omit, ...rest } = args ?? {};
    world.calls.push({ method, args: rest, token, at: Date.now(), result });
    world.changed();
  };
  if (req.method !== "POST" && req.method !== "GET") return send(res, { status: 405, body: { ok: false, error: "method_not_allowed" } });
  if (!args) {
    record("invalid_form_data");
    return send(res, fail("invalid_form_data"));
  }
  if (!token) {
    record("not_authed");
    return send(res, fail("not_authed"));
  }
  const kind: TokenKind | undefined = token === world.botToken ? "bot" : token === world.appToken ? "app" : undefined;
  if (!kind) {
    record("invalid_auth");
    return send(res, fail("invalid_auth"));
  }
  // Slack names the token's scopes on every answer to a call it could authenticate.
  const granted = kind === "bot" ? world.scopes : APP_TOKEN_SCOPES;
  const needed = scopeNeeded(method, args);
  const headers = scopeHeaders(granted, needed);
  const fault = world.takeFault(method);
  if (fault) {
    if (fault.status === 429 || fault.retryAfter !== undefined) {
      record("429");
      return send(res, { status: 429, headers: { ...headers, "retry-after": String(fault.retryAfter ?? 1) }, body: { ok: false, error: "ratelimited" } });
    }
    record(fault.error ?? String(fault.status));
    return send(res, { status: fault.status ?? 200, headers, body: { ok: false, error: fault.error ?? "internal_error" } });
  }
  const tokenFits = kind === "app" ? method === "apps.connections.open" : method !== "apps.connections.open";
  if (needed && tokenFits && !granted.includes(needed)) {
    record("missing_scope");
    return send(res, { headers, body: { ok: false, error: "missing_scope", needed, provided: granted.join(",") } });
  }
  const answer = runMethod(world, method, args, kind, socketUrl);
  record(answer.body.ok ? "ok" : String(answer.body.error));
  send(res, { ...answer, headers: { ...headers, ...answer.headers } });
}

const ResponseUrlBody = z.object({
  text: z.string().optional(),
  blocks: z.array(z.unknown()).optional(),
  response_type: z.enum(["ephemeral", "in_channel"]).optional(),
  replace_original: z.boolean().optional(),
  delete_original: z.boolean().optional(),
  thread_ts: z.string().optional(),
});

/** What a response_url belongs to: the interaction's channel, user and (for clicks) message. */
export interface ResponseUrlContext {
  channel: string;
  user: string;
  messageTs?: string;
  threadTs?: string;
}

/** Handles `POST /response/<id>` (replies through an interaction's response_url). */
export async function handleResponseUrl(world: SlackWorld, req: IncomingMessage, res: ServerResponse, context: ResponseUrlContext | undefined): Promise<void> {
  const raw = await readBody(req);
  let parsed: z.infer<typeof ResponseUrlBody> | undefined;
  try {
    parsed = ResponseUrlBody.parse(JSON.parse(raw));
  } catch {
    parsed = undefined;
  }
  world.calls.push({ method: "response_url", args: parsed ?? { raw }, at: Date.now(), result: parsed && context ? "ok" : "invalid" });
  if (!context) return send(res, { status: 404, body: { ok: false, error: "expired_url" } });
  if (!parsed) return send(res, { status: 400, body: { ok: false, error: "invalid_payload" } });
  const original = context.messageTs ? world.findMessage(context.channel, context.messageTs) : undefined;
  if (parsed.delete_original && original) {
    world.messages.splice(world.messages.indexOf(original), 1);
  } else if (parsed.replace_original && original) {
    original.text = parsed.text ?? "";
    original.blocks = parsed.blocks;
    original.edited = true;
  } else if (parsed.response_type === "in_channel") {
    world.addMessage({ channel: context.channel, ts: world.nextTs(), threadTs: parsed.thread_ts ?? context.threadTs, user: world.botUserId, botId: world.botId, text: parsed.text ?? "", blocks: parsed.blocks });
  } else {
    world.ephemerals.push({ channel: context.channel, user: context.user, threadTs: context.threadTs, text: parsed.text ?? "", via: "response_url", at: Date.now() });
  }
  world.changed();
  send(res, { body: { ok: true } });
}
