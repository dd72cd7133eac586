/**
 * The composition root: config → logger → store → tools → model → engine → gateway → adapters.
 * The only place that knows every concrete part; everything else receives what it needs.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import { channelsToStart, configSecrets, modelEndpointProblem, ConfigError } from "./config/load.ts";
import { assertWorkspaceIsolated } from "./config/workspace-isolation.ts";
import type { ChannelName, Config } from "./config/schema.ts";
import { ChannelSetupError, type ChannelAdapter, type ChannelSetup } from "./ports.ts";
import { createLogger } from "./observe/logger.ts";
import { createObserver, type Observer } from "./observe/observer.ts";
import { openStore } from "./store/open-store.ts";
import type { Coordination } from "./store/coordination.ts";
import type { Store } from "./store/store.ts";
import { ToolRegistry } from "./tools/registry.ts";
import { builtinTools } from "./tools/builtin/index.ts";
import type { AnyTool } from "./tools/tool.ts";
import type { McpHub } from "./tools/mcp/hub.ts";
import { startFailureLines } from "./tools/mcp/start-report.ts";
import { McpActivation } from "./tools/mcp/activation.ts";
import { HookRegistry, registerConfigHooks } from "./policy/hooks.ts";
import { createModelClient } from "./model/openai-client.ts";
import type { ModelClient } from "./model/types.ts";
import { checkModelEndpoint } from "./model/endpoint-check.ts";
import { Delivery } from "./delivery/delivery.ts";
import { progressStyleFor } from "./delivery/task-progress.ts";
import { approverRuleProblems, unknownGroupProblems } from "./approval/rule-checks.ts";
import { PendingApprovals } from "./approval/pending-approvals.ts";
import { recordPolicyAtStart } from "./approval/decision-log-policy.ts";
import { approvalManagerFor } from "./approval/choose-manager.ts";
import { questionerFor } from "./approval/choose-questioner.ts";
import { Gateway } from "./gateway/gateway.ts";
import { Scheduler } from "./gateway/scheduler.ts";
import { leasedChannel, type LeasedChannel } from "./gateway/leased-channel.ts";
import { pruneSpilledOutput } from "./engine/record.ts";
import type { ResolvedExecution, ToolActivation } from "./engine/types.ts";
import { createReceiptSigner } from "./observe/receipt-signer.ts";
import { claimDataDir, RuntimeStatus } from "./observe/runtime-status.ts";
import { watchChannelHealth } from "./observe/channel-health.ts";
import { batchedLog } from "./observe/log-batch.ts";
import { openRotatingLog } from "./observe/log-files.ts";
import { startHttpServer, type HttpServer } from "./http/server.ts";
import { Readiness, type ReadinessCheck } from "./http/readiness.ts";
import { mountHealthRoutes } from "./http/health-routes.ts";
import { mountTurnsApi } from "./http/turns-api.ts";

export interface BotOptions {
  /** Adapters to run instead of the ones the config names (tests, embedding). */
  adapters?: ChannelAdapter[];
  log?: Logger;
  /** Tools added beside the built-ins. */
  extraTools?: AnyTool[];
  /** Registers code hooks (before_tool_call / after_tool_call). */
  hooks?: (registry: HookRegistry) => void;
  /** Called when a channel asks the bot to shut down (the console's input ended). */
  onShutdownRequest?: () => void;
  /** A model client to use instead of the configured endpoint. */
  model?: ModelClient;
  /** What `gatehouse status` calls that client (default: "a model client given at start"). */
  modelLabel?: string;
  /** Called when a started channel reports that its connection is gone for good. */
  onChannelFailed?: (channel: string, detail: string) => void;
}

export interface Bot {
  config: Config;
  gateway: Gateway;
  store: Store;
  delivery: Delivery;
  approvals: PendingApprovals;
  observer: Observer;
  adapters: ChannelAdapter[];
  mcp: McpTools;
  log: Logger;
  /** The one HTTP server (health, readiness, Slack's Events API, the Telegram webhook), when PORT is set. */
  http?: HttpServer;
  /** Cancels running turns, flushes queues, stops channels and closes the store. */
  stop(): Promise<void>;
}

/** What the bot uses of its MCP servers. */
export type McpTools = Pick<McpHub, "start" | "ready" | "tools" | "status" | "close">;

/** The MCP side of a bot with no servers configured. */
const NO_MCP_SERVERS: McpTools = {
  start: async () => {},
  ready: async () => {},
  tools: () => [],
  status: () => [],
  close: async () => {},
};

/** Store keys of the MCP tools each session activated. */
const ACTIVE_TOOLS = "mcp.active:";

export const DEFAULT_SYSTEM_PROMPT =
  "You are Gatehouse, an assistant that a team talks to in chat. Answer clearly and briefly. " +
  "Use tools when they help; some tool calls wait for a person's approval, and a denied call is final: " +
  "do not retry it, explain what you could not do instead.";

function logDestinations(config: Config, channels: ChannelName[]) {
  // Rotates by size (gatehouse.log.1 … .3) so the data folder does not fill up; `gatehouse logs` reads them all.
  const file = openRotatingLog(config.dataDir);
  // The console channel owns the terminal: logs go to the file only.
  const stdout = channels.includes("console") ? [] : [process.stdout];
  return [batchedLog([file, ...stdout])];
}

/** Builds and starts the bot. Throws ConfigError for configuration a person must fix. */
export async function startBot(config: Config, options: BotOptions = {}): Promise<Bot> {
  const channelNames = options.adapters ? options.adapters.map((a) => a.channel as ChannelName) : channelsToStart(config);
  const problem = options.model ? undefined : modelEndpointProblem(config);
  if (problem) throw new ConfigError([problem]);
  // The workspace must not hold the bot's own files: file tools would read or overwrite them.
  assertWorkspaceIsolated(config);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  claimDataDir(config.dataDir);
  mkdirSync(config.workspace!, { recursive: true });
  const log =
    options.log ?? createLogger({ level: config.logLevel, secrets: configSecrets(config), destinations: logDestinations(config, channelNames) });
  const readiness = new Readiness(channelNames);
  // One HTTP server on PORT, up first: /healthz answers while the rest starts, /readyz says what is still missing.
  const http = config.httpPort === undefined ? undefined : await startHttpServer({ port: config.httpPort, host: config.httpHost ?? "0.0.0.0", log });
  if (http) mountHealthRoutes(http, readiness);
  try {
    return await startParts(config, options, { channelNames, log, http, readiness });
  } catch (err) {
    await http?.close();
    throw err;
  }
}

/** What startBot set up before the rest starts. */
interface StartContext {
  channelNames: ChannelName[];
  log: Logger;
  http: HttpServer | undefined;
  readiness: Readiness;
}

async function startParts(config: Config, options: BotOptions, { channelNames, log, http, readiness }: StartContext): Promise<Bot> {
  const observer = createObserver(log);
  const store = await openStore({
    dataDir: config.dataDir, databaseUrl: config.databaseUrl,
    onConnectionError: (err) => log.warn({ err: err.message }, "database connection dropped; the pool reconnects"),
  });
  readiness.storeOpened(() => store.getValue("gatehouse.readyz"));
  // A config edit that lets more run without a person is written to the decision log.
  const policyChange = await recordPolicyAtStart(store, config);
  if (policyChange?.outcome === "widened") log.warn({ detail: policyChange.detail }, "the approval policy widened since the last start");
  // Several replicas share the database: sessions are leased and their messages wait in durable inboxes.
  const coordination = config.databaseUrl ? await openCoordination(config.databaseUrl, store) : undefined;
  const status = new RuntimeStatus(config.dataDir, observer);

  const approvals = new PendingApprovals({
    store, log, observer, timeoutMs: config.approval.timeoutMs, admins: (channel) => config.approval.approvers[channel] ?? [],
    alwaysTtl: config.approval.alwaysTtl, now: coordination ? () => coordination.now() : undefined,
  });

  const pruned = await pruneSpilledOutput(path.join(config.dataDir, "spill"));
  if (pruned) log.info({ pruned }, "old saved tool output removed");

  const registry = new ToolRegistry([
    ...builtinTools({ workspace: config.workspace!, http: config.http, shell: config.shell }),
    ...(options.extraTools ?? []),
  ]);
  // The MCP client library is loaded only when servers are configured.
  const mcp: McpTools = Object.keys(config.mcp.servers).length
    ? new (await import("./tools/mcp/hub.ts")).McpHub(config.mcp, log, { workspace: config.workspace! })
    : NO_MCP_SERVERS;
  await mcp.start();
  // Tools activated through tool_search stay active for the session, across restarts too.
  const activationState = new McpActivation({
    load: async (key) => {
      const stored = await store.getValue(`${ACTIVE_TOOLS}${key}`);
      return stored === undefined ? undefined : (JSON.parse(stored) as string[]);
    },
  });
  const activation: ToolActivation = {
    deferred: config.mcp.deferred,
    filterGroups: config.mcp.filterGroups,
    isActive: (key, tool) => activationState.active(key).has(tool),
    restore: (key) => activationState.restore(key),
    activate: (key, tools) => {
      activationState.activate(key, tools);
      // Merged with what the store holds first, so a session memory forgot keeps its earlier tools.
      void activationState.restore(key).then(() => store.setValue(`${ACTIVE_TOOLS}${key}`, JSON.stringify([...activationState.active(key)])));
    },
  };
  const catalog = () => [...registry.list(), ...mcp.tools()];
  const ruleProblems = approverRuleProblems(config.approval, catalog());
  if (ruleProblems.length) {
    await mcp.close();
    await coordination?.close();
    await store.close();
    throw new ConfigError(ruleProblems);
  }

  const hooks = new HookRegistry({ log });
  registerConfigHooks(hooks, config.hooks, { allowHosts: config.http.allowHosts, approval: config.approval });
  options.hooks?.(hooks);

  if (!options.model) {
    const checkEndpoint = () => checkModelEndpoint(config.model.baseURL ?? "https://api.openai.com/v1", config.model.apiKey);
    const check = await checkEndpoint();
    if (!check.ok && check.fatal) {
      await mcp.close();
      await coordination?.close();
      await store.close();
      throw new ConfigError([check.message]);
    }
    if (!check.ok) log.warn({ detail: check.message }, "model endpoint check");
    readiness.modelChecked(asReadiness(check), async () => asReadiness(await checkEndpoint()));
  } else readiness.modelChecked({ ok: true, detail: "a model client in this process" });
  const model =
    options.model ??
    createModelClient({
      baseURL: config.model.baseURL, apiKey: config.model.apiKey ?? "not-needed", model: config.model.name,
      toolProtocol: config.model.toolProtocol, timeoutMs: config.model.timeoutMs, maxRetries: config.model.maxRetries,
      stream: config.model.stream, log,
    });

  const receipts = config.receipts.enabled ? createReceiptSigner(config) : undefined;

  const delivery = new Delivery(log, observer);
  const gateway = new Gateway({
    store, delivery, approvals, log, observer, historyLimit: config.engine.historyLimit,
    dedupeTtlMs: config.gateway.dedupeTtlMs, maxConcurrentTurns: config.gateway.maxConcurrentTurns,
    maxQueuedPerSession: config.gateway.maxQueuedPerSession,
    coordination, leaseTtlMs: config.gateway.leaseTtlMs,
    onSessionReset: async (key) => {
      activationState.forget(key);
      await store.deleteValue(`${ACTIVE_TOOLS}${key}`);
      await store.forgetAlways(`session:${key}`);
    },
  });

  const shared = {
    log, http, httpHost: config.httpHost, onShutdownRequest: options.onShutdownRequest,
    values: {
      get: (key: string) => store.getValue(key), set: (key: string, value: string) => store.setValue(key, value),
      list: (prefix: string) => store.listValues(prefix), delete: (key: string) => store.deleteValue(key),
    },
    approvalTimeoutMs: config.approval.timeoutMs,
  };
  const created =
    options.adapters ??
    (await createChannelAdapters(config, channelNames, shared).catch(async (err: unknown) => {
      await mcp.close();
      await coordination?.close();
      await store.close();
      throw err;
    }));
  // With replicas, only one holds Discord's single gateway connection; the others stand by.
  const adapters = created.map((a) =>
    coordination && a.channel === "discord" ? leasedChannel(a, coordination, log.child({ channel: a.channel }), config.gateway.leaseTtlMs) : a,
  );
  for (const adapter of adapters) {
    delivery.addChannel(adapter.channel, {
      port: adapter.port, maxMessageChars: adapter.capabilities.maxMessageChars, pacing: adapter.pacing,
      progress: progressStyleFor(config, adapter.channel),
    });
    const exec: ResolvedExecution = {
      model, catalog, hooks, store, observer, log, receipts, activation,
      policy: { tools: config.tools, approval: config.approval, loop: config.loop },
      approvals: approvalManagerFor(adapter, approvals, delivery),
      questions: questionerFor(adapter, gateway.questions),
      knobs: {
        maxIterations: config.engine.maxIterations, maxToolResultChars: config.engine.maxToolResultChars,
        spillToolResultChars: config.engine.spillToolResultChars, parallelTools: config.engine.parallelTools,
        duplicateExempt: config.engine.duplicateExempt, excludedTools: [], spillDir: path.join(config.dataDir, "spill"),
        workspace: config.workspace!, systemPrompt: config.model.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        contextTokens: config.model.contextTokens, answerReserveTokens: config.model.answerReserveTokens,
      },
    };
    const serving = "serving" in adapter ? (adapter as LeasedChannel).serving : undefined;
    gateway.addChannel(adapter.channel, { exec, port: adapter.port, access: accessFor(config, adapter.channel), serving });
  }
  const started: ChannelAdapter[] = [];
  // What arrives while the previous process's turns and kept messages are put back waits for them.
  const releaseMessages = gateway.holdMessages();
  try {
    for (const adapter of adapters) {
      await adapter.start(gateway.sink());
      started.push(adapter);
      readiness.channelStarted(adapter);
      log.info({ channel: adapter.channel }, "channel started");
      // The person at the console does not read the log: a server that failed at start is named to them.
      for (const line of adapter.notice ? startFailureLines(mcp.status()) : []) adapter.notice!(line);
    }
    // Groups and roles in approver rules must exist on the platform: a typo would let nobody approve.
    const groupProblems = await unknownGroupProblems(
      config.approval,
      adapters.map((a) => ({ channel: a.channel, unknownApproverGroups: a.port.unknownApproverGroups?.bind(a.port) })),
    );
    if (groupProblems.length) throw new ConfigError(groupProblems);
  } catch (err) {
    releaseMessages();
    for (const a of started) await a.stop().catch(() => {});
    await mcp.close();
    await coordination?.close();
    await store.close();
    throw err;
  }
  try {
    // Turns parked or checkpointed by the previous process continue; their cards stay live.
    const live = await gateway.resumeSaved();
    const recovered = await approvals.recover(live);
    if (live.size || recovered.closed) log.info({ parked: live.size, ...recovered }, "turns and approvals from before the restart recovered");
    // Messages the previous process kept at its shutdown, or was cut off from, run next, behind those turns.
    const messages = await gateway.resumeMessages();
    if (messages.kept || messages.restarted || messages.answered) log.info(messages, "messages left by the previous process are answered now");
  } finally {
    releaseMessages();
  }
  void gateway.reportUnfinished().then((told) => {
    if (told) log.warn({ told }, "messages left unanswered by the previous process were reported to their senders");
  });
  const scheduler = config.schedules.length
    ? new Scheduler({
        schedules: config.schedules, store, log: log.child({ component: "scheduler" }), observer,
        run: (env) => gateway.task(env),
        capabilitiesOf: (channel) => adapters.find((a) => a.channel === channel)?.capabilities,
      })
    : undefined;
  await scheduler?.start();
  // Triggered turns for CI jobs and alert hooks, on the one HTTP server.
  if (http) {
    mountTurnsApi(http, {
      token: config.apiToken, store, observer, run: (env) => gateway.task(env),
      capabilitiesOf: (channel) => adapters.find((a) => a.channel === channel)?.capabilities,
    });
  }
  const stopWatching = watchChannelHealth(started, log, options.onChannelFailed);
  status.started({
    channels: adapters.map((a) => a.channel),
    health: () => adapters.filter((a) => a.health).map((a) => ({ channel: a.channel, ...a.health!() })),
    model: options.model ? (options.modelLabel ?? "a model client given at start") : `${config.model.name} at ${config.model.baseURL ?? "https://api.openai.com/v1"}`,
    gateway,
    mcp,
  });
  readiness.started();
  http?.ready();

  let stopping: Promise<void> | undefined;
  return {
    config, gateway, store, delivery, approvals, observer, adapters, mcp, log, http,
    stop() {
      stopping ??= (async () => {
        readiness.stopping();
        stopWatching();
        scheduler?.stop();
        log.info("shutting down");
        await gateway.close(config.gateway.shutdownGraceMs);
        approvals.close();
        for (const a of adapters) await a.stop().catch((err: Error) => log.warn({ err: err.message, channel: a.channel }, "channel stop failed"));
        await mcp.close();
        status.stopped();
        await coordination?.close();
        await store.close();
        await http?.close();
      })();
      return stopping;
    },
  };
}

/** Coordination of replicas on the store's PostgreSQL database (loaded only for such a deployment). */
async function openCoordination(url: string, store: Store): Promise<Coordination> {
  try {
    const { openPostgresCoordination } = await import("./store/postgres-coordination.ts");
    return await openPostgresCoordination(url);
  } catch (err) {
    await store.close();
    throw err;
  }
}

function accessFor(config: Config, channel: string) {
  if (channel === "slack" || channel === "discord" || channel === "telegram") return config[channel].access;
  return { users: ["*"], conversations: ["*"], dm: "open" as const, mentionGate: false, refusalCooldownMs: 600_000 };
}

/** What the model endpoint check at start means for readiness. */
function asReadiness(check: Awaited<ReturnType<typeof checkModelEndpoint>>): ReadinessCheck {
  return check.ok ? { ok: true } : { ok: false, detail: check.message };
}

/** What every channel's `fromConfig` receives besides its own config section. */
type SharedSetup = Omit<ChannelSetup<unknown>, "settings">;

/**
 * One registration line per platform: its adapter builds itself from its config section. Each
 * platform's SDK is loaded only when its channel starts (a Telegram bot never loads discord.js).
 */
const CHANNELS: Record<ChannelName, (config: Config, setup: SharedSetup) => Promise<ChannelAdapter>> = {
  console: async (_, setup) => (await import("../adapters/console/from-config.ts")).consoleFromConfig({ ...setup, settings: {} }),
  slack: async (config, setup) => (await import("../adapters/slack/from-config.ts")).slackFromConfig({ ...setup, settings: config.slack }),
  discord: async (config, setup) => (await import("../adapters/discord/from-config.ts")).discordFromConfig({ ...setup, settings: config.discord }),
  telegram: async (config, setup) => (await import("../adapters/telegram/from-config.ts")).telegramFromConfig({ ...setup, settings: config.telegram }),
};

/** Builds the adapters of the channels to start; a channel's missing setting is a ConfigError. */
async function createChannelAdapters(config: Config, channels: ChannelName[], shared: SharedSetup): Promise<ChannelAdapter[]> {
  const adapters: ChannelAdapter[] = [];
  for (const channel of channels) {
    try {
      adapters.push(await CHANNELS[channel](config, { ...shared, log: shared.log.child({ channel }) }));
    } catch (err) {
      throw err instanceof ChannelSetupError ? new ConfigError(err.problems) : err;
    }
  }
  return adapters;
}
