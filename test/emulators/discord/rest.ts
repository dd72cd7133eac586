/**
 * The emulator's REST half: the /api/v10 routes discord.js calls, with Discord's auth,
 * limits, error bodies and 429 headers. Every request is recorded in `state.calls`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DiscordState, EmuMessage, Fault } from "./state.ts";
import { applicationJson, type ApplicationSettings } from "./application.ts";
import { z } from "zod";
import { allowedCallbackTypes, callbackTypeRefusal, ModalSchema } from "./modals.ts";
import { ChannelType } from "./state.ts";
import {
  CommandsSchema,
  InteractionCallbackSchema,
  MessageBodySchema,
  MessageEditSchema,
  StartThreadSchema,
  invalidFormBody,
  type MessageBody,
} from "./validation.ts";

/** Sends a gateway dispatch to the connected bot. */
export type Dispatch = (event: string, data: Record<string, unknown>) => void;

export interface RestContext {
  state: DiscordState;
  dispatch: Dispatch;
  gatewayUrl: () => string;
  /** How long an interaction may wait for its first response (Discord: 3 s). */
  ackDeadlineMs: number;
  /** The app's Developer Portal settings (privileged intents). */
  application: ApplicationSettings;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Request {
  params: string[];
  body: unknown;
  query: URLSearchParams;
}

interface Route {
  name: string;
  method: string;
  pattern: RegExp;
  /** Interaction and webhook routes are authorized by their token in the path, not a bot token. */
  auth: boolean;
  handle(ctx: RestContext, req: Request): Reply;
}

const EPHEMERAL = 1 << 6;
const ok = (body: unknown): Reply => ({ status: 200, body });
const noContent: Reply = { status: 204 };
const error = (status: number, code: number, message: string): Reply => ({ status, body: { message, code } });
const unknownChannel = error(404, 10003, "Unknown Channel");
const unknownMessage = error(404, 10008, "Unknown Message");
const unknownGuild = error(404, 10004, "Unknown Guild");
// A callback's `data`, read by its type; wrapped so a refusal names the field as Discord does (`data.title`).
const ModalDataSchema = z.object({ data: ModalSchema });
const MessageDataSchema = z.object({ data: MessageBodySchema });

function parse<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: import("zod").ZodError } }, body: unknown): T | Reply {
  const result = schema.safeParse(body);
  return result.success ? result.data : { status: 400, body: invalidFormBody(result.error) };
}
const isReply = (v: unknown): v is Reply => typeof v === "object" && v !== null && "status" in v && typeof (v as Reply).status === "number";

function isEmpty(body: MessageBody): boolean {
  return !body.content?.trim() && !body.components?.length && !body.embeds?.length;
}

function createMessage(ctx: RestContext, channelId: string, body: MessageBody, extra: Partial<EmuMessage> = {}): EmuMessage {
  const { state } = ctx;
  const ref = body.message_reference;
  const message = state.addMessage({
    channel_id: channelId,
    author: state.bot,
    content: body.content ?? "",
    components: body.components ?? [],
    flags: body.flags ?? 0,
    ...(ref ? { message_reference: { message_id: ref.message_id, channel_id: ref.channel_id ?? channelId } } : {}),
    ...extra,
  });
  if (!message.ephemeralFor) ctx.dispatch("MESSAGE_CREATE", state.messageJson(message));
  return message;
}

function applyEdit(ctx: RestContext, message: EmuMessage, edit: { content?: string | null; components?: unknown[] | null }): Reply {
  if (edit.content !== undefined) message.content = edit.content ?? "";
  if (edit.components !== undefined) message.components = edit.components ?? [];
  message.edited_timestamp = new Date().toISOString();
  const json = ctx.state.messageJson(message);
  if (!message.ephemeralFor) ctx.dispatch("MESSAGE_UPDATE", json);
  return ok(json);
}

/** Finds a live interaction by id/token; 10062 once its response window has passed. */
function liveInteraction(ctx: RestContext, id: string, token: string, forCallback: boolean) {
  const interaction = ctx.state.interactions.get(id);
  if (!interaction || interaction.token !== token) return error(404, 10062, "Unknown interaction");
  const age = Date.now() - interaction.createdAt;
  if (forCallback && age > ctx.ackDeadlineMs) return error(404, 10062, "Unknown interaction");
  if (!forCallback && age > 15 * 60_000) return error(401, 50027, "Invalid Webhook Token");
  return interaction;
}

function findInteractionByToken(ctx: RestContext, appId: string, token: string) {
  if (appId !== ctx.state.applicationId) return undefined;
  return [...ctx.state.interactions.values()].find((i) => i.token === token);
}

const ROUTES: Route[] = [
  {
    name: "getGatewayBot", method: "GET", pattern: /^\/gateway\/bot$/, auth: true,
    handle: (ctx) => ok({ url: ctx.gatewayUrl(), shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 } }),
  },
  { name: "getCurrentUser", method: "GET", pattern: /^\/users\/@me$/, auth: true, handle: (ctx) => ok(ctx.state.bot) },
  {
    name: "getCurrentApplication", method: "GET", pattern: /^\/applications\/@me$/, auth: true,
    handle: (ctx) => ok(applicationJson(ctx.state, ctx.application)),
  },
  {
    name: "getChannel", method: "GET", pattern: /^\/channels\/(\d+)$/, auth: true,
    handle: (ctx, { params }) => {
      const channel = ctx.state.channels.get(params[0]!);
      return channel ? ok(ctx.state.channelJson(channel)) : unknownChannel;
    },
  },
  {
    name: "getGuildRoles", method: "GET", pattern: /^\/guilds\/(\d+)\/roles$/, auth: true,
    handle: (ctx, { params }) => (params[0] === ctx.state.guildId ? ok(ctx.state.rolesJson()) : unknownGuild),
  },
  {
    // Everyone the emulator has seen is a member of its one server; anyone else is an Unknown Member.
    name: "getGuildMember", method: "GET", pattern: /^\/guilds\/(\d+)\/members\/(\d+)$/, auth: true,
    handle: (ctx, { params }) => {
      if (params[0] !== ctx.state.guildId) return unknownGuild;
      const user = ctx.state.users.get(params[1]!);
      return user ? ok(ctx.state.guildRoles.memberJson(user, ctx.state.memberRoles(user.id))) : error(404, 10007, "Unknown Member");
    },
  },
  {
    name: "createMessage", method: "POST", pattern: /^\/channels\/(\d+)\/messages$/, auth: true,
    handle: (ctx, { params, body }) => {
      if (!ctx.state.channels.has(params[0]!)) return unknownChannel;
      const parsed = parse(MessageBodySchema, body);
      if (isReply(parsed)) return parsed;
      if (isEmpty(parsed)) return error(400, 50006, "Cannot send an empty message");
      const ref = parsed.message_reference;
      if (ref && ref.fail_if_not_exists !== false && !ctx.state.findMessage(ref.channel_id ?? params[0]!, ref.message_id)) {
        return { status: 400, body: { message: "Invalid Form Body", code: 50035, errors: { message_reference: { _errors: [{ code: "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", message: "Unknown message" }] } } } };
      }
      return ok(ctx.state.messageJson(createMessage(ctx, params[0]!, parsed)));
    },
  },
  {
    name: "getMessage", method: "GET", pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/, auth: true,
    handle: (ctx, { params }) => {
      const message = ctx.state.findMessage(params[0]!, params[1]!);
      return message && !message.ephemeralFor ? ok(ctx.state.messageJson(message)) : unknownMessage;
    },
  },
  {
    name: "editMessage", method: "PATCH", pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/, auth: true,
    handle: (ctx, { params, body }) => {
      const message = ctx.state.findMessage(params[0]!, params[1]!);
      if (!message || message.ephemeralFor) return unknownMessage;
      if (message.author.id !== ctx.state.bot.id) return error(403, 50005, "Cannot edit a message authored by another user");
      const parsed = parse(MessageEditSchema, body);
      if (isReply(parsed)) return parsed;
      const wait = ctx.state.takeEditSlot(params[0]!);
      if (wait !== undefined) return faultReply({ status: 429, retryAfter: wait });
      return applyEdit(ctx, message, parsed);
    },
  },
  {
    name: "startThread", method: "POST", pattern: /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/, auth: true,
    handle: (ctx, { params, body }) => {
      const { state } = ctx;
      const parent = state.channels.get(params[0]!);
      if (!parent) return unknownChannel;
      if (parent.type !== ChannelType.GuildText) return error(400, 50024, "Cannot execute action on this channel type");
      if (!state.findMessage(parent.id, params[1]!)) return unknownMessage;
      // A thread started from a message takes the message's id as its channel id.
      if (state.channels.has(params[1]!)) return error(400, 160004, "A thread has already been created for this message");
      const parsed = parse(StartThreadSchema, body);
      if (isReply(parsed)) return parsed;
      const thread = { id: params[1]!, type: ChannelType.PublicThread, name: parsed.name, guild_id: parent.guild_id!, parent_id: parent.id, owner_id: state.bot.id };
      state.channels.set(thread.id, thread);
      const json = state.channelJson(thread);
      ctx.dispatch("THREAD_CREATE", { ...json, newly_created: true });
      return { status: 201, body: json };
    },
  },
  {
    name: "typing", method: "POST", pattern: /^\/channels\/(\d+)\/typing$/, auth: true,
    handle: (ctx, { params }) => (ctx.state.channels.has(params[0]!) ? noContent : unknownChannel),
  },
  {
    name: "interactionCallback", method: "POST", pattern: /^\/interactions\/(\d+)\/([^/]+)\/callback$/, auth: false,
    handle: (ctx, { params, body }) => {
      const interaction = liveInteraction(ctx, params[0]!, params[1]!, true);
      if (isReply(interaction)) return interaction;
      if (interaction.acknowledged) return error(400, 40060, "Interaction has already been acknowledged.");
      const callback = parse(InteractionCallbackSchema, body);
      if (isReply(callback)) return callback;
      const allowed = allowedCallbackTypes(interaction.type, interaction.messageId !== undefined);
      if (!allowed.includes(callback.type)) return { status: 400, body: callbackTypeRefusal(allowed) };
      if (callback.type === 9) {
        const parsedModal = parse(ModalDataSchema, { data: callback.data });
        if (isReply(parsedModal)) return parsedModal;
        const modal = parsedModal.data;
        interaction.acknowledged = true;
        interaction.responses.push({ kind: "callback", type: 9, ephemeral: false, modal, at: Date.now() });
        ctx.state.modals.push({
          interactionId: interaction.id, userId: interaction.user.id, channelId: interaction.channelId,
          ...(interaction.messageId ? { messageId: interaction.messageId } : {}), body: modal, open: true,
        });
        return noContent;
      }
      const message = callback.data === undefined ? undefined : parse(MessageDataSchema, { data: callback.data });
      if (isReply(message)) return message;
      const parsed = { type: callback.type, data: message?.data };
      const ephemeral = ((parsed.data?.flags ?? 0) & EPHEMERAL) !== 0;
      if (parsed.type === 4 && parsed.data && isEmpty(parsed.data)) return error(400, 50006, "Cannot send an empty message");
      interaction.acknowledged = true;
      interaction.responses.push({ kind: "callback", type: parsed.type, content: parsed.data?.content, ephemeral, at: Date.now() });
      if (parsed.type === 4 && parsed.data) {
        createMessage(ctx, interaction.channelId, parsed.data, {
          interactionId: interaction.id, application_id: ctx.state.applicationId, webhook_id: ctx.state.applicationId,
          ...(ephemeral ? { ephemeralFor: interaction.user.id } : {}),
        });
      }
      if (parsed.type === 7 && parsed.data && interaction.messageId) {
        const message = ctx.state.findMessage(interaction.channelId, interaction.messageId);
        if (message) applyEdit(ctx, message, parsed.data);
      }
      return noContent;
    },
  },
  {
    name: "webhookExecute", method: "POST", pattern: /^\/webhooks\/(\d+)\/([^/]+)$/, auth: false,
    handle: (ctx, { params, body }) => {
      const found = findInteractionByToken(ctx, params[0]!, params[1]!);
      if (!found) return error(404, 10015, "Unknown Webhook");
      const interaction = liveInteraction(ctx, found.id, found.token, false);
      if (isReply(interaction)) return interaction;
      if (!interaction.acknowledged) return error(404, 10015, "Unknown Webhook");
      const parsed = parse(MessageBodySchema, body);
      if (isReply(parsed)) return parsed;
      if (isEmpty(parsed)) return error(400, 50006, "Cannot send an empty message");
      const ephemeral = ((parsed.flags ?? 0) & EPHEMERAL) !== 0;
      interaction.responses.push({ kind: "followup", content: parsed.content, ephemeral, at: Date.now() });
      const message = createMessage(ctx, interaction.channelId, parsed, {
        interactionId: interaction.id, application_id: ctx.state.applicationId, webhook_id: ctx.state.applicationId,
        ...(ephemeral ? { ephemeralFor: interaction.user.id } : {}),
      });
      return ok(ctx.state.messageJson(message));
    },
  },
  {
    name: "webhookEditOriginal", method: "PATCH", pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/, auth: false,
    handle: (ctx, { params, body }) => {
      const found = findInteractionByToken(ctx, params[0]!, params[1]!);
      if (!found) return error(404, 10015, "Unknown Webhook");
      const interaction = liveInteraction(ctx, found.id, found.token, false);
      if (isReply(interaction)) return interaction;
      const parsed = parse(MessageEditSchema, body);
      if (isReply(parsed)) return parsed;
      const original =
        [...ctx.state.messagesIn(interaction.channelId)].find((m) => m.interactionId === interaction.id) ??
        (interaction.messageId ? ctx.state.findMessage(interaction.channelId, interaction.messageId) : undefined);
      if (!original) return unknownMessage;
      interaction.responses.push({ kind: "edit-original", content: parsed.content ?? undefined, ephemeral: Boolean(original.ephemeralFor), at: Date.now() });
      return applyEdit(ctx, original, parsed);
    },
  },
  {
    name: "putCommands", method: "PUT", pattern: /^\/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/, auth: true,
    handle: (ctx, { params, body }) => {
      if (params[0] !== ctx.state.applicationId) return error(403, 50001, "Missing Access");
      const parsed = parse(CommandsSchema, body);
      if (isReply(parsed)) return parsed;
      const registered = parsed.map((c) => ({ ...c, id: ctx.state.snowflake(), application_id: ctx.state.applicationId, version: ctx.state.snowflake(), type: c.type ?? 1 }));
      ctx.state.commands.set(params[1] ?? "global", registered);
      return ok(registered);
    },
  },
];

function faultReply(fault: Fault): Reply {
  if (fault.status !== 429) return error(fault.status, fault.code ?? 0, fault.message ?? "Emulated failure");
  const retryAfter = fault.retryAfter ?? 1;
  const headers: Record<string, string> = {
    "Retry-After": String(Math.ceil(retryAfter)),
    "X-RateLimit-Limit": "5",
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Reset": String(Date.now() / 1000 + retryAfter),
    "X-RateLimit-Reset-After": String(retryAfter),
    "X-RateLimit-Bucket": "emulated-bucket",
    "X-RateLimit-Scope": fault.global ? "global" : "user",
  };
  if (fault.global) headers["X-RateLimit-Global"] = "true";
  return { status: 429, headers, body: { message: "You are being rate limited.", retry_after: retryAfter, global: Boolean(fault.global) } };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (!chunks.length) return undefined;
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return Symbol.for("invalid-json");
  }
}

/** Handles one HTTP request to the REST API. */
export async function handleRest(ctx: RestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://emulator");
  const method = req.method ?? "GET";
  const body = await readBody(req);
  const path = url.pathname.replace(/^\/api\/v10/, "");
  const route = url.pathname.startsWith("/api/v10/") ? ROUTES.find((r) => r.method === method && r.pattern.test(path)) : undefined;
  let reply: Reply;
  if (!route) {
    reply = error(404, 0, "404: Not Found");
  } else if (route.auth && req.headers.authorization !== `Bot ${ctx.state.token}`) {
    reply = error(401, 0, "401: Unauthorized");
  } else if (body === Symbol.for("invalid-json")) {
    reply = error(400, 50109, "The request body contains invalid JSON.");
  } else {
    const fault = ctx.state.takeFault(route.name);
    reply = fault ? faultReply(fault) : route.handle(ctx, { params: route.pattern.exec(path)!.slice(1), body, query: url.searchParams });
  }
  ctx.state.calls.push({ method, path: url.pathname, route: route?.name ?? "unknown", body, status: reply.status, at: Date.now() });
  res.writeHead(reply.status, { ...(reply.body !== undefined ? { "content-type": "application/json" } : {}), ...reply.headers });
  res.end(reply.body !== undefined ? JSON.stringify(reply.body) : undefined);
}
