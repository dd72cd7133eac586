/**
 * What every configuration key means, by its path in the config file (`*` stands for a free key
 * of a map, `[]` for the items of a list). The JSON Schema (`gatehouse config schema`,
 * config.schema.json) and the reference page (docs/config.md) take their descriptions from here; a
 * `.describe()` on the zod schema itself wins. A test fails when a key of the schema has no meaning
 * here, or an entry here names a key the schema no longer has.
 */

/** The sender rule's keys, for `tools.bySender.*` and the rules nested in conversations. */
const senderRule = (where: string): Record<string, string> => ({
  [`${where}`]: "A rule for the senders or conversations matched by its key; it may change the profile and the allow list, and add denies.",
  [`${where}.profile`]: "The base set of tools here, replacing the less specific layer's profile.",
  [`${where}.allow`]: "Tool patterns allowed here; a non-empty list blocks every tool not in it (an empty list sets no allow list at this layer).",
  [`${where}.deny`]: "Tool patterns refused here; a deny from any matching layer wins over everything.",
});

const access = (platform: string): Record<string, string> => ({
  [`${platform}.access`]: `Who may talk to the bot on ${platform}, and where.`,
  [`${platform}.access.users`]: 'Sender ids allowed to talk to the bot; "*" means anyone, an empty list no one.',
  [`${platform}.access.conversations`]: 'Conversation (channel, chat, server channel) ids the bot answers in; "*" means every one.',
  [`${platform}.access.dm`]: '"open": allowed users may write to the bot directly; "off": direct messages are turned away with one polite reply.',
  [`${platform}.access.mentionGate`]: "In groups and channels, answer only when addressed: a mention, a reply to the bot, or a thread it takes part in.",
  [`${platform}.access.refusalCooldownMs`]: "A refused sender is told so at most once per this many milliseconds.",
});

const mcpServer = "mcp.servers.*";

export const KEY_DOCS: Record<string, string> = {
  $schema: 'The JSON Schema the file follows, for completion and checks in an editor (e.g. "./config.schema.json"); the bot ignores it.',

  model: "The model endpoint: any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio, OpenRouter).",
  "model.apiKey": "The endpoint's API key. Not needed by most local servers.",
  "model.baseURL": "The endpoint's base URL, e.g. http://127.0.0.1:11434/v1; unset: OpenAI (https://api.openai.com/v1).",
  "model.name": "The model's name as the endpoint knows it.",
  "model.toolProtocol": '"native" (the API\'s tool calling), "text" (<tool_call> blocks in the prompt, for models without tool calling) or "auto".',
  "model.timeoutMs": "How long one model request may take, in milliseconds.",
  "model.maxRetries": "How often a failed model request (connection error, 429, 5xx) is retried.",
  "model.systemPrompt": "The system prompt; unset: Gatehouse's own, which explains approvals to the model.",
  "model.contextTokens": "The model's context window in tokens; unset: what the endpoint's /models reports, else 32,000 (the smaller when both are known).",
  "model.answerReserveTokens": "Tokens kept free for the answer; unset: an eighth of the window, 256 to 4,096.",

  dataDir: "The data folder: the SQLite store, logs, saved tool output, receipt.key, the status snapshot.",
  workspace: "The folder the file and shell tools work in; unset: <data dir>/workspace. It must not contain the data folder, .env or the config file.",
  logLevel: "The pino log level.",
  progress:
    '"status": one live status message per task, edited as tools run (within the platform\'s edit budget) and closed with a summary; "lines": a message per batch of progress lines; "off": only the answer and approval cards. A channel\'s own progress key wins.',
  httpPort: "The port of the bot's one HTTP server (/healthz, /readyz, Slack's /slack/events, the Telegram webhook); unset: no shared server. Platforms set PORT.",
  httpHost: "The address HTTP receivers bind to; unset: 0.0.0.0 (every interface). Use 127.0.0.1 on a developer's machine.",
  apiToken: "The bearer token callers of POST /v1/turns must send (GATEHOUSE_API_TOKEN); unset: the turns API refuses every call.",
  databaseUrl: "PostgreSQL for several replicas (postgres://user:password@host/db); unset: the embedded SQLite store in the data folder.",
  channels: "The channels to start; unset: every channel whose token is set, else the console.",

  engine: "The turn engine: how many model round trips a turn may take and how tool output is kept.",
  "engine.maxIterations": "Model requests per turn at most; at the cap, one last request without tools asks for a summary.",
  "engine.maxToolResultChars": "A tool result longer than this is cut for the model (head and tail kept, with a marker saying how much was cut).",
  "engine.spillToolResultChars": "Output longer than this many characters is saved to a file in the data folder and referenced by path.",
  "engine.parallelTools": "Run the calls of one batch in parallel when none needs an approval.",
  "engine.historyLimit": "How many stored messages of a conversation are sent to the model as its history.",
  "engine.duplicateExempt": "Tools the duplicate guard never collapses (calls meant to repeat within one batch).",

  gateway: "Between the channels and the engine: concurrency, queues, dedupe, shutdown and replicas.",
  "gateway.maxConcurrentTurns": "Model requests and tool runs in progress at once, at most (waiting turns hold nothing).",
  "gateway.maxQueuedPerSession": "Messages waiting behind a running turn in one conversation, at most; beyond that the sender is told it was not queued.",
  "gateway.dedupeTtlMs": "How long an event id is remembered, so that a platform's redelivery is answered once.",
  "gateway.shutdownGraceMs": "At shutdown, how long a computing turn may finish its current step before it is saved to continue after the restart.",
  "gateway.leaseTtlMs": "With several replicas (DATABASE_URL): how long a replica's hold on a thread lasts without renewal, i.e. how soon another replica takes over the threads of one that died.",

  tools: "Which tools are offered to whom. Deny always wins; the most specific layer that sets a profile or an allow list decides.",
  "tools.profile": 'The base set of tools: "minimal" (current_time), "messaging" (+ tool_search), "standard" (built-ins and MCP tools), "full" (everything).',
  "tools.allow": "Tool names or patterns (mcp:github__*) offered; a non-empty list blocks every tool not in it.",
  "tools.deny": "Tool names or patterns never offered, at any layer.",
  "tools.bySender": 'Rules per sender: keys "<channel>:<sender id>", "<channel>:*" or "*".',
  ...senderRule("tools.bySender.*"),
  "tools.byConversation": 'Rules per conversation: keys "<channel>:<conversation id>".',
  ...senderRule("tools.byConversation.*"),
  "tools.byConversation.*.bySender": "Rules per sender that apply only inside this conversation.",
  ...senderRule("tools.byConversation.*.bySender.*"),
  "tools.elevated": "Exec-class tools (shell) are offered only to senders listed here, and never over a deny.",
  "tools.elevated.enabled": "Offer exec-class tools at all.",
  "tools.elevated.allowFrom": 'Sender keys who may run exec-class tools ("slack:U123", "telegram:*", "*"); by default only the local console.',

  approval: "When a tool call needs a person's approval, and who may give it.",
  "approval.autonomy": '"readonly" (only read tools are offered), "supervised" (write and exec tools ask first) or "full" (policy approves every call; alwaysAsk and hooks still ask).',
  "approval.alwaysAsk": "Tool patterns that always ask, whatever else says (only a deny beats it).",
  "approval.autoApprove": "Tool patterns approved by policy in supervised mode.",
  "approval.timeoutMs": "How long a card waits for a decision before the call is denied as timed out.",
  "approval.approvers": 'People per channel who may approve anyone\'s call, besides the person who asked: { "slack": ["U024ADMIN"] }.',
  "approval.alwaysScope": 'Where an "Always" answer holds: "session" (that thread or chat), "conversation", or "sender" (everywhere, for that person).',
  "approval.alwaysCoversOthers": 'Whether an "Always" also covers other people\'s calls in its session or conversation; off: only the person whose call was answered.',

  hooks: "Built-in before_tool_call hooks, run by priority: block a call, or require an approval for it.",
  "hooks[].type": '"block" (refuse the call, with the reason) or "require_approval" (ask a person even where policy would not).',
  "hooks[].tools": "Tool patterns the hook applies to.",
  "hooks[].match": "A regular expression tested against the call's arguments as canonical JSON; unset: every call of those tools.",
  "hooks[].priority": "Higher runs first.",
  "hooks[].reason": "Why: shown to the model and in the audit log (required for block).",

  receipts: "HMAC receipts of successful tool executions: proof that a tool ran with exactly these arguments and gave this output.",
  "receipts.enabled": "Sign each successful tool execution.",
  "receipts.key": "The HMAC key (16+ characters); unset: one is generated in <data dir>/receipt.key (back it up).",
  "receipts.show": "Show the receipt with the tool's progress line.",

  loop: "The loop detector: the same call repeated in one turn warns the model, then blocks, then ends the turn. Counts include the call being checked.",
  "loop.warnAt": "At this many identical calls in a turn, the model is warned.",
  "loop.blockAt": "At this many, the call is refused.",
  "loop.abortAt": "At this many, the turn ends.",
  "loop.ignoredTools": "Tool patterns the detector never looks at.",

  mcp: "MCP servers whose tools the bot offers (as <server>__<tool>), and how they are offered.",
  "mcp.servers": "MCP servers by name (letters, digits, - and single _): stdio when it has command, Streamable HTTP when it has url.",
  [mcpServer]: "One MCP server.",
  [`${mcpServer}.command`]: "stdio: the program to start.",
  [`${mcpServer}.args`]: "stdio: its arguments.",
  [`${mcpServer}.env`]: "stdio: environment variables for it.",
  [`${mcpServer}.cwd`]: "stdio: the folder it starts in.",
  [`${mcpServer}.url`]: "HTTP: the server's Streamable HTTP endpoint (http or https).",
  [`${mcpServer}.headers`]: "HTTP: headers sent with every request (e.g. Authorization).",
  [`${mcpServer}.timeoutMs`]: "How long one call may go without an answer; each progress report from the server starts the wait again, up to maxCallMs.",
  [`${mcpServer}.maxCallMs`]: "The longest a call may take however often the server reports progress.",
  [`${mcpServer}.risk`]: 'The risk of every tool of this server: "exec" for a server that runs commands, "read" for one trusted to only read; unset: the tools\' annotations decide.',
  [`${mcpServer}.toolRisk`]: "The risk of single tools (by the server's tool name or the name the model sees); beats risk.",
  [`${mcpServer}.readOnly`]: 'Every tool of this server only reads: the same as risk "read".',
  [`${mcpServer}.readOnlyTools`]: 'Tool names (as the server names them) that only read: the same as toolRisk "read".',
  [`${mcpServer}.lazy`]: "Connect on first use instead of at start.",
  "mcp.deferred": "Offer only the MCP tool names and a tool_search tool until the model activates tools for the session.",
  "mcp.filterGroups": "Groups that limit which MCP tools a message sees.",
  "mcp.filterGroups[].mode": '"always": these tools are seen every turn; "dynamic": only when the message has one of the keywords.',
  "mcp.filterGroups[].tools": "Globs over tool names (github__*) or ids (mcp:github__*).",
  "mcp.filterGroups[].keywords": "Words that bring a dynamic group's tools into a turn.",

  http: "The http_fetch tool.",
  "http.allowPrivateNetwork": "Let http_fetch reach private, loopback and link-local addresses.",
  "http.allowHosts": 'Hosts http_fetch reaches without asking a person (and even when private): "api.example.com" (any port), "api.example.com:8443", "*.example.com".',
  "http.timeoutMs": "How long one fetch may take.",

  shell: "The shell tool.",
  "shell.timeoutMs": "How long one command may run before the whole sandbox is killed.",
  "shell.sandbox": '"auto": run commands in the bubblewrap sandbox when the machine has it; "off": never.',
  "shell.allowUnsandboxed": "Offer the shell beyond the console even where commands cannot be sandboxed.",
  "shell.hidePaths": "More paths the sandbox hides (the data folder, the config file and .env are always hidden).",

  slack: "The Slack channel (@slack/bolt): Socket Mode with appToken, else the HTTP Events API with signingSecret.",
  "slack.botToken": "The Bot User OAuth Token (xoxb-…); setting it turns the Slack channel on.",
  "slack.appToken": "The app-level token (xapp-…, scope connections:write): Socket Mode.",
  "slack.signingSecret": "The signing secret (Basic Information): the HTTP Events API, used when no app token is set.",
  "slack.apiUrl": "The Web API base URL, for a proxy or the test emulator; unset: https://slack.com/api/.",
  "slack.port": "HTTP Events API: a port of its own for /slack/events; unset: the shared server on PORT, else 3000.",
  "slack.slashCommand": "The slash command the app answers (/gatehouse stop | status | new).",
  "slack.progress": 'How tasks show their progress on Slack ("status", "lines" or "off"); unset: the global progress.',
  ...access("slack"),

  discord: "The Discord channel (discord.js on the gateway).",
  "discord.token": "The bot token (Developer Portal → Bot → Reset Token); setting it turns the Discord channel on.",
  "discord.apiUrl": "The REST base URL without the version, for a proxy or the test emulator; the gateway URL comes from its GET /gateway/bot.",
  "discord.allowedGuilds": "Server ids the bot serves; unset: every server it is in.",
  "discord.allowedChannels": "Channel ids the bot serves (threads under them included); unset: every channel.",
  "discord.registerSlashCommands": "Register /stop, /status and /new as slash commands at start (per allowed server when allowedGuilds is set, else globally).",
  "discord.progress": 'How tasks show their progress on Discord ("status", "lines" or "off"); unset: the global progress.',
  ...access("discord"),

  telegram: "The Telegram channel (grammY): long polling, or the webhook when webhookUrl is set.",
  "telegram.botToken": "The bot token from @BotFather; setting it turns the Telegram channel on.",
  "telegram.apiRoot": "The Bot API root without a trailing slash, for a local Bot API server or the test emulator; unset: https://api.telegram.org.",
  "telegram.webhookUrl": "The public HTTPS URL Telegram posts updates to (webhook mode); unset: long polling.",
  "telegram.webhookSecret": "Required with webhookUrl: Telegram sends it with every update, and a request without it is refused.",
  "telegram.webhookPort": "Webhook mode: a port of its own for the receiver; unset: the shared server on PORT, else the port webhookUrl names, else 8443.",
  "telegram.editProgressInPlace": 'With progress "lines": keep one progress message per request and edit it as lines come in, instead of one message per line.',
  "telegram.progress": 'How tasks show their progress on Telegram ("status", "lines" or "off"); unset: the global progress.',
  ...access("telegram"),

  schedules: "Scheduled tasks: a prompt the bot is asked at each tick of a cron expression, answered in a conversation.",
  "schedules[].name": "Names the schedule in logs, status and its policy subject (schedule:<name>).",
  "schedules[].cron": 'The cron expression; 6 fields means seconds first ("*/30 * * * * *").',
  "schedules[].timezone": "The IANA time zone the expression is read in; unset: the machine's.",
  "schedules[].prompt": "What the bot is asked at each tick.",
  "schedules[].deliverTo": 'Where the answer and its progress go: "<slack|discord|telegram|console>:<conversation id>[:<thread id>]".',
  "schedules[].approvalsTo": 'Where approval cards go; unset: calls that need a person are denied ("no approval channel here").',
};
