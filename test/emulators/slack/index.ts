/**
 * A local Slack for tests: the Web API, Socket Mode and signed HTTP event delivery on
 * 127.0.0.1, with Slack's limits. `startSlackEmulator()` returns helpers to act as users
 * (post, click, run a slash command), read what the bot posted, inject faults and close.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { SlackWorld, type AckTiming, type EmulatedMessage, type Fault, type WorkspaceOptions } from "./state.ts";
import { handleResponseUrl, handleWebApi, type ResponseUrlContext } from "./web-api.ts";
import { ACK_DEADLINE_MS, SocketModeLink, type EnvelopeKind } from "./socket-mode.ts";
import { deliverOverHttp, type HttpDeliveryOptions, type HttpTarget } from "./http-events.ts";
import { ALL_SUBSCRIPTIONS, blockActionsPayload, eventsForPost, slashCommandPayload, type Subscription } from "./payloads.ts";
import { buttonsOf } from "./blocks.ts";
import type { EmulatedView } from "./views.ts";

export { SlackWorld } from "./state.ts";
export type { AckTiming, EmulatedMessage, EmulatedEphemeral, RecordedCall, Fault } from "./state.ts";
export { blocksText, buttonsOf } from "./blocks.ts";
export { MAX_TEXT_CHARS } from "./web-api.ts";
export { ACK_DEADLINE_MS, type EnvelopeKind } from "./socket-mode.ts";
export { MANIFEST_BOT_SCOPES } from "./scopes.ts";
export { TRIGGER_TTL_MS, type EmulatedView } from "./views.ts";
export type { EmulatedUserGroup } from "./usergroups.ts";

export interface SlackEmulatorOptions extends WorkspaceOptions {
  subscriptions?: Subscription[];
}

/** One delivery to the bot: its ack timing, and for HTTP mode the endpoint's status. */
export interface Delivery {
  timing: AckTiming;
  status?: number;
}

export interface UserPost {
  user: string;
  channel: string;
  text: string;
  threadTs?: string;
  /** Sends Slack's `subtype` (e.g. "message_changed", "channel_join"). */
  subtype?: string;
  /** Post as another app's bot (bot_id set, subtype bot_message). */
  asBot?: boolean;
  /** Files shared with the message: the event is then subtype `file_share` and carries them. */
  files?: Array<{ name: string; filetype?: string }>;
}

export interface SlackEmulator {
  /** Base URL of the Web API, ready for `slackApiUrl` (ends with `/api/`). */
  apiUrl: string;
  world: SlackWorld;
  botToken: string;
  appToken: string;
  botUserId: string;
  /** Routes deliveries to a bot's HTTP endpoint (Events API mode) instead of Socket Mode. */
  useHttp(target: HttpTarget | undefined): void;
  /** Resolves once a bot is connected over Socket Mode. */
  waitForSocket(timeoutMs?: number): Promise<void>;
  /** A person posts a message; resolves once every resulting event was delivered (and acked). */
  userPosts(post: UserPost, options?: HttpDeliveryOptions): Promise<{ message: EmulatedMessage; deliveries: Delivery[] }>;
  /** Delivers the events of the last post again, as Slack's retry does. */
  redeliverLast(options?: HttpDeliveryOptions): Promise<Delivery[]>;
  /** A person clicks a button carrying `value` on a message (a value not on the card = a forged click). */
  click(channel: string, messageTs: string, user: string, value: string, options?: HttpDeliveryOptions & { actionId?: string }): Promise<Delivery>;
  /**
   * The person a modal is shown to submits it with `values` (input action id → text); resolves once
   * the app acknowledged (or the deadline passed), with the modal as it then stands (closed, or open
   * with errors). Throws where Slack's client would not submit (a required input empty, too long).
   */
  submitView(viewId: string, values: Record<string, string>, options?: HttpDeliveryOptions): Promise<{ delivery: Delivery; view: EmulatedView }>;
  /** A person runs a slash command. */
  slashCommand(channel: string, user: string, command: string, text: string, options?: HttpDeliveryOptions): Promise<Delivery>;
  /**
   * The payload `slashCommand` would send (with a working response_url), for a test to alter
   * (drop fields, change types) and send with `deliverRaw`.
   */
  slashCommandBody(channel: string, user: string, command: string, text: string): Record<string, unknown>;
  /**
   * Delivers `payload` exactly as given, as a Socket Mode envelope of `kind` (or the matching
   * signed HTTP request): for payloads Slack may send that the helpers above do not build.
   */
  deliverRaw(kind: EnvelopeKind, payload: Record<string, unknown>, options?: HttpDeliveryOptions): Promise<Delivery>;
  /** Messages in a conversation (optionally one thread, parent included), oldest first. */
  messagesIn(channel: string, threadTs?: string): EmulatedMessage[];
  /** Sends `disconnect` (refresh_requested) to connected bots. */
  requestRefresh(): void;
  /** The next call of `method` fails with this fault (e.g. `{ status: 429, retryAfter: 1 }`). */
  failNext(method: string, fault: Fault): void;
  close(): Promise<void>;
}

/** Starts the emulator on 127.0.0.1, on an ephemeral port. */
export async function startSlackEmulator(options: SlackEmulatorOptions = {}): Promise<SlackEmulator> {
  const world = new SlackWorld(options);
  const subscriptions = options.subscriptions ?? ALL_SUBSCRIPTIONS;
  const responseUrls = new Map<string, ResponseUrlContext>();
  let base = "";
  let httpTarget: HttpTarget | undefined;
  const link = new SocketModeLink(world, () => base.replace(/^http/, "ws"));

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const api = /^\/api\/([A-Za-z.]+)$/.exec(url.pathname);
    const reply = /^\/response\/([\w-]+)$/.exec(url.pathname);
    const fail = (e: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    };
    if (api) void handleWebApi(world, req, res, api[1]!, () => link.newUrl()).catch(fail);
    else if (reply) void handleResponseUrl(world, req, res, responseUrls.get(reply[1]!)).catch(fail);
    else res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ ok: false, error: "not_found" }));
  });
  server.on("upgrade", (req, socket, head) => link.upgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const newResponseUrl = (context: ResponseUrlContext): string => {
    const id = randomUUID();
    responseUrls.set(id, context);
    return `${base}/response/${id}`;
  };

  const deliver = async (kind: EnvelopeKind, payload: unknown, opts: HttpDeliveryOptions = {}): Promise<Delivery> => {
    if (httpTarget) {
      const r = await deliverOverHttp(httpTarget, kind, payload, opts);
      world.acks.push(r.timing);
      return { timing: r.timing, status: r.status };
    }
    const extra = kind === "events_api" && opts.retryNum !== undefined ? { retry_attempt: opts.retryNum, retry_reason: opts.retryReason ?? "timeout" } : {};
    return { timing: await link.deliver(kind, payload, extra) };
  };

  let lastEvents: Record<string, unknown>[] = [];
  let retries = 0;

  return {
    apiUrl: `${base}/api/`,
    world,
    botToken: world.botToken,
    appToken: world.appToken,
    botUserId: world.botUserId,
    useHttp(target) {
      httpTarget = target;
    },
    waitForSocket: (timeoutMs) => link.waitConnected(timeoutMs),
    async userPosts(post, opts) {
      if (!world.channels.has(post.channel)) throw new Error(`unknown channel ${post.channel}`);
      const message = world.addMessage({
        channel: post.channel, ts: world.nextTs(), threadTs: post.threadTs, user: post.user, text: post.text,
        ...(post.asBot ? { botId: `B${post.user}` } : {}),
      });
      const files = post.files?.map((f, i) => ({
        id: `F0${message.ts.replace(".", "")}${i}`, name: f.name, title: f.name, filetype: f.filetype ?? f.name.split(".").pop() ?? "binary",
        mimetype: "application/octet-stream", user: post.user, mode: "hosted", is_external: false,
      }));
      const extra = files?.length ? { subtype: "file_share", files, upload: true } : post.subtype ? { subtype: post.subtype } : {};
      lastEvents = eventsForPost(world, message, subscriptions, extra);
      retries = 0;
      const deliveries: Delivery[] = [];
      for (const ev of lastEvents) deliveries.push(await deliver("events_api", ev, opts));
      return { message, deliveries };
    },
    async redeliverLast(opts) {
      retries += 1;
      const deliveries: Delivery[] = [];
      for (const ev of lastEvents) deliveries.push(await deliver("events_api", ev, { retryNum: retries, ...opts }));
      return deliveries;
    },
    async click(channel, messageTs, user, value, opts = {}) {
      const message = world.findMessage(channel, messageTs);
      if (!message) throw new Error(`no message ${channel}/${messageTs}`);
      const button = buttonsOf(message.blocks).find((b) => b.value === value);
      const action = button ?? { actionId: opts.actionId ?? "forged", value, label: "?" };
      const responseUrl = newResponseUrl({ channel, user, messageTs, threadTs: message.threadTs ?? message.ts });
      const payload = blockActionsPayload(world, message, user, action, responseUrl);
      payload.trigger_id = world.views.issueTrigger(user);
      return deliver("interactive", payload, opts);
    },
    async submitView(viewId, values, opts) {
      const view = world.views.opened.find((v) => v.id === viewId);
      if (!view) throw new Error(`no modal ${viewId} was opened`);
      const userName = world.users.get(view.user)?.name ?? view.user;
      const payload = world.views.submissionPayload(view, values, { teamId: world.teamId, appId: world.appId, botId: world.botId, userName });
      const delivery = await deliver("interactive", payload, opts);
      const inTime = delivery.timing.ms !== undefined && delivery.timing.ms <= ACK_DEADLINE_MS && (delivery.status ?? 200) === 200;
      world.views.acknowledged(view, delivery.timing.ackPayload, inTime);
      world.changed();
      return { delivery, view };
    },
    async slashCommand(channel, user, command, text, opts) {
      const responseUrl = newResponseUrl({ channel, user });
      return deliver("slash_commands", slashCommandPayload(world, channel, user, command, text, responseUrl), opts);
    },
    slashCommandBody(channel, user, command, text) {
      return slashCommandPayload(world, channel, user, command, text, newResponseUrl({ channel, user }));
    },
    deliverRaw: (kind, payload, opts) => deliver(kind, payload, opts),
    messagesIn(channel, threadTs) {
      return world.messages.filter((m) => m.channel === channel && (threadTs === undefined || m.ts === threadTs || m.threadTs === threadTs));
    },
    requestRefresh: () => link.requestRefresh(),
    failNext: (method, fault) => world.failNext(method, fault),
    async close() {
      link.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
