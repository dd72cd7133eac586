/**
 * The Slack channel adapter: connects with @slack/bolt over Socket Mode (SLACK_APP_TOKEN)
 * or the HTTP Events API (SLACK_SIGNING_SECRET; Bolt's HTTPReceiver mounted on the process's shared
 * HTTP server when there is one, else Bolt's own listener), checks SLACK_BOT_TOKEN at startup, feeds
 * messages, approval clicks and slash commands to the sink, and sends through its port.
 */
import { App, HTTPReceiver, SocketModeReceiver, webApi, type ViewSubmitAction } from "@slack/bolt";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ChannelCapabilities } from "../../src/envelope.ts";
import type { ChannelAdapter, InboundSink } from "../../src/ports.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { registerSecret } from "../../src/observe/scrub.ts";
import type { SlackAdapterOptions } from "./options.ts";
import { boltLogger } from "./bolt-logger.ts";
import { startupError } from "./errors.ts";
import { SlackMessageEventSchema, decodeSlackText, ignoreReason, toEnvelope, type InboundContext } from "./inbound.ts";
import { SlackUserDirectory } from "./users.ts";
import { BotThreads, createSlackPort, SLACK_PACING } from "./outbound.ts";
import { createSlackApproverGroups } from "./approver-groups.ts";
import { handleApprovalClick } from "./clicks.ts";
import { handleMessageButtonClick } from "./message-buttons.ts";
import { handleReasonSubmission, REASON_MODAL_CALLBACK } from "./reason-modal.ts";
import { rememberCardTools } from "../card-tools.ts";
import { handleSlashCommand } from "./slash-command.ts";
import { CommandReplies } from "./command-replies.ts";
import { ackUnusedPayloads, ackUntypedPayloads } from "./unused-payloads.ts";

/** What Slack can do, as the engine and delivery see it. */
export const SLACK_CAPABILITIES: ChannelCapabilities = {
  threads: true,
  inlineApproval: true,
  edit: true,
  typing: true,
  // Slack accepts 40,000, but long messages read badly and collapse; delivery splits at this.
  maxMessageChars: 4000,
  maxButtonPayloadBytes: 2000,
};

const DEFAULT_API_URL = "https://slack.com/api/";

/** The Slack adapter, plus where its HTTP endpoint listens once started in HTTP mode. */
export interface SlackChannelAdapter extends ChannelAdapter {
  /** HTTP mode: the full URL of the events endpoint after start (for the app's Request URL and tests). */
  readonly eventsUrl: string | undefined;
  /** The bot's own user id, known after start. */
  readonly botUserId: string | undefined;
}

/** Creates the Slack adapter; nothing connects until `start`. */
export function createSlackAdapter(options: SlackAdapterOptions): SlackChannelAdapter {
  // The composition root binds the channel to the logger it hands each adapter.
  const log = options.log ?? silentLogger();
  for (const s of [options.botToken, options.appToken, options.signingSecret]) registerSecret(s);
  const apiUrl = options.apiUrl ?? DEFAULT_API_URL;
  const channel = "slack";
  // The delivery queue owns retries and 429 waits, so the SDK must neither retry nor sleep.
  const clientOptions = () => ({ slackApiUrl: apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logger: boltLogger(log) });
  const client = new webApi.WebClient(options.botToken, clientOptions());
  const threads = new BotThreads();
  const commandReplies = new CommandReplies();
  const users = new SlackUserDirectory(client, log);
  const port = {
    ...createSlackPort({ client, threads, log, commandReplies, workingStatus: options.workingStatus ?? "is working…" }),
    ...createSlackApproverGroups({ client, log }),
  };
  const cardTools = rememberCardTools(port);

  let app: App | undefined;
  let sink: InboundSink | undefined;
  let eventsUrl: string | undefined;
  let botUserId: string | undefined;
  /** On the shared HTTP server: takes the events route down again (the app itself never listens). */
  let unmount: (() => void) | undefined;

  const checkBotToken = async (): Promise<{ userId: string; botId?: string }> => {
    if (!options.botToken) throw new Error("SLACK_BOT_TOKEN is not set. Set it to the Bot User OAuth Token (xoxb-…) of your Slack app.");
    try {
      const res = await client.auth.test();
      return { userId: String(res.user_id), botId: res.bot_id ? String(res.bot_id) : undefined };
    } catch (err) {
      throw startupError(err, "SLACK_BOT_TOKEN", apiUrl);
    }
  };

  const listen = (a: App, auth: { userId: string; botId?: string }) => {
    ackUntypedPayloads(a, log);
    const ctx: InboundContext = {
      channel,
      account: options.account,
      botUserId: auth.userId,
      botId: auth.botId,
      capabilities: SLACK_CAPABILITIES,
      botIsInThread: (c, t) => threads.has(c, t),
      readableText: async (text) => decodeSlackText(await users.resolveMentions(text)),
      senderName: (id) => users.nameOf(id),
      now: () => Date.now(),
    };
    const onMessageEvent = async ({ event }: { event: unknown }) => {
      const parsed = SlackMessageEventSchema.safeParse(event);
      if (!parsed.success) return void log.debug({ issues: parsed.error.issues.length }, "unreadable message event dropped");
      const why = ignoreReason(parsed.data, auth.userId, auth.botId);
      if (why) return void log.debug({ why, ts: parsed.data.ts }, "event ignored");
      try {
        await sink?.message(await toEnvelope(parsed.data, ctx));
      } catch (err) {
        log.warn({ err: String(err), ts: parsed.data.ts }, "message event not delivered to the gateway");
      }
    };
    a.event("message", onMessageEvent);
    a.event("app_mention", onMessageEvent);
    a.action(/.*/, async ({ ack, body }) => {
      await ack();
      if (await handleMessageButtonClick(body, { channel, account: options.account, client, port, log, sink: () => sink })) return;
      await handleApprovalClick(body, { channel, client, log, sink: () => sink, cardTools });
    });
    a.view<ViewSubmitAction>(REASON_MODAL_CALLBACK, async ({ ack, body }) => {
      await handleReasonSubmission(body, ack, { channel, client, log, sink: () => sink });
    });
    const commandName = options.slashCommand ?? "/gatehouse";
    a.use(ackUnusedPayloads(commandName, log));
    a.command(commandName, async ({ ack, body }) => {
      await handleSlashCommand(body, ack, { channel, account: options.account, commandName, log, sink: () => sink, capabilities: SLACK_CAPABILITIES, replies: commandReplies });
    });
    a.error(async (err) => {
      log.warn({ err: err.message }, "slack listener error");
    });
  };

  return {
    channel,
    capabilities: SLACK_CAPABILITIES,
    port,
    // Slack allows about one message a second per channel, across its threads; nothing bot-wide.
    pacing: SLACK_PACING,
    get eventsUrl() {
      return eventsUrl;
    },
    get botUserId() {
      return botUserId;
    },

    async start(s: InboundSink) {
      const mode = options.mode ?? (options.appToken ? "socket" : options.signingSecret ? "http" : undefined);
      if (!mode) throw new Error("Slack needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP Events API mode); neither is set.");
      if (mode === "socket" && !options.appToken) throw new Error("Socket Mode needs SLACK_APP_TOKEN (an app-level token, xapp-…).");
      if (mode === "http" && !options.signingSecret) throw new Error("HTTP mode needs SLACK_SIGNING_SECRET (Basic Information → Signing Secret).");
      const auth = await checkBotToken();
      botUserId = auth.userId;
      sink = s;
      const common = { token: options.botToken, botId: auth.botId, botUserId: auth.userId, tokenVerificationEnabled: false, logger: boltLogger(log), clientOptions: clientOptions() };
      if (mode === "socket") {
        const receiver = new SocketModeReceiver({
          appToken: options.appToken!,
          logger: boltLogger(log),
          clientPingTimeout: options.socketPingTimeoutMs,
          installerOptions: { clientOptions: clientOptions() },
        });
        app = new App({ ...common, receiver, socketMode: true });
        listen(app, auth);
        try {
          await app.start();
        } catch (err) {
          app = undefined;
          throw startupError(err, "SLACK_APP_TOKEN", apiUrl);
        }
      } else if (options.http?.routes) {
        const path = options.http.path ?? "/slack/events";
        const receiver = new HTTPReceiver({ signingSecret: options.signingSecret!, endpoints: path, logger: boltLogger(log) });
        app = new App({ ...common, receiver });
        listen(app, auth);
        unmount = options.http.routes.mount("POST", path, receiver.requestListener);
        eventsUrl = `${options.http.routes.localUrl}${path}`;
      } else {
        const path = options.http?.path ?? "/slack/events";
        app = new App({ ...common, signingSecret: options.signingSecret!, endpoints: path });
        listen(app, auth);
        const host = options.http?.host;
        const server = (await app.start({ port: options.http?.port ?? 3000, ...(host ? { host } : {}) })) as Server;
        const address = server.address() as AddressInfo;
        eventsUrl = `http://${host ?? "127.0.0.1"}:${address.port}${path}`;
      }
      log.info({ mode, botUserId: auth.userId }, "slack connected");
    },

    async stop() {
      const a = app;
      app = undefined;
      sink = undefined;
      eventsUrl = undefined;
      if (unmount) {
        unmount();
        unmount = undefined;
        return;
      }
      if (a) await a.stop();
    },

    health() {
      return app ? { ok: true } : { ok: false, detail: "not connected (not started yet, or stopped)" };
    },
  };
}
