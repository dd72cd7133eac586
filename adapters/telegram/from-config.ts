/**
 * Builds the Telegram adapter from the config's `telegram` section: long polling (the update offset
 * kept in the store), or the webhook when TELEGRAM_WEBHOOK_URL is set — on the shared HTTP server
 * when PORT is set, else listening on `telegram.webhookPort`, the port the URL names, or 8443. An
 * explicit `telegram.webhookPort` keeps a listener of its own even when PORT is set.
 */
import { ChannelSetupError, type ChannelSetup } from "../../src/ports.ts";
import { createTelegramAdapter, type TelegramAdapter, type TelegramAdapterOptions } from "./index.ts";

/** The keys of the config's `telegram` section this adapter reads. */
export interface TelegramSettings {
  botToken?: string;
  apiRoot?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  webhookPort?: number;
  editProgressInPlace?: boolean;
  access: { mentionGate: boolean };
}

const OFFSET_KEY = "telegram.offset";
const DAY_MS = 24 * 3_600_000;
/** "Deny with reason…" prompts, by `<chat id>:<prompt message id>`. */
const PROMPT_PREFIX = "telegram.reason-prompt:";

/** The Telegram adapter for these settings; throws ChannelSetupError naming what to set. */
export function telegramFromConfig(setup: ChannelSetup<TelegramSettings>): TelegramAdapter {
  const t = setup.settings;
  if (!t.botToken) throw new ChannelSetupError(["TELEGRAM_BOT_TOKEN: required for the Telegram channel (from @BotFather)"]);
  if (t.webhookUrl && !t.webhookSecret) {
    throw new ChannelSetupError(["TELEGRAM_WEBHOOK_SECRET: required with TELEGRAM_WEBHOOK_URL, so that only Telegram can post updates"]);
  }
  let webhook: TelegramAdapterOptions["webhook"];
  if (t.webhookUrl && t.webhookSecret) {
    const listen =
      setup.http && t.webhookPort === undefined
        ? { routes: setup.http }
        : { port: t.webhookPort ?? (Number(new URL(t.webhookUrl).port) || 8443), ...(setup.httpHost ? { host: setup.httpHost } : {}) };
    webhook = { url: t.webhookUrl, secret: t.webhookSecret, listen };
  }
  return createTelegramAdapter({
    token: t.botToken, apiRoot: t.apiRoot, log: setup.log, editProgressInPlace: t.editProgressInPlace, mentionGate: t.access.mentionGate,
    offsetStore: {
      get: async () => {
        const v = await setup.values.get(OFFSET_KEY);
        return v === undefined ? undefined : Number(v);
      },
      set: (n) => setup.values.set(OFFSET_KEY, String(n)),
    },
    promptStore: {
      get: (key) => setup.values.get(`${PROMPT_PREFIX}${key}`),
      set: (key, value) => setup.values.set(`${PROMPT_PREFIX}${key}`, value),
      list: async () => (await setup.values.list(PROMPT_PREFIX)).map(({ key, value }) => ({ key: key.slice(PROMPT_PREFIX.length), value })),
      delete: (key) => setup.values.delete(`${PROMPT_PREFIX}${key}`),
    },
    // A reply a day after its card expired is still told so; after that the prompt is forgotten.
    ...(setup.approvalTimeoutMs !== undefined ? { keepPromptsMs: setup.approvalTimeoutMs + DAY_MS } : {}),
    webhook,
  });
}
