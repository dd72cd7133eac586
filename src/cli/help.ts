/**
 * What `gatehouse <command> --help` (and `gatehouse help <command>`) prints for each command, and
 * the package version `gatehouse --version` prints. `store` prints its own, longer help.
 */
import { readFileSync } from "node:fs";

/** The version in package.json. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
  return manifest.version ?? "unknown";
}

const CONFIG_SOURCES = "It reads the same configuration as the bot: the environment, .env, and the file named by GATEHOUSE_CONFIG.";

/** Help per command name. */
export const COMMAND_HELP: Record<string, string> = {
  start: `usage: gatehouse start [--demo]

Runs the bot in the foreground until SIGINT or SIGTERM (what \`npm start\` runs). A channel starts when
its token is set (SLACK_BOT_TOKEN, DISCORD_TOKEN, TELEGRAM_BOT_TOKEN), else the console opens;
GATEHOUSE_CHANNELS picks explicitly. With PORT set, one HTTP server listens there (on HOST, default
0.0.0.0): GET /healthz, GET /readyz, Slack's /slack/events and the Telegram webhook's path.

With no model endpoint configured and only the console to open, it runs on the built-in demo model
and says so. A platform channel with no model endpoint stops with the error that says what to set.

Options:
  --demo    run on the built-in demo model, even when an endpoint is configured (npm run demo);
            on the console unless GATEHOUSE_CHANNELS names other channels
  --help    this text
`,
  doctor: `usage: gatehouse doctor [--offline]

Checks the configuration and the environment, asks each platform whose token is set and the model
endpoint whether they answer (3 s each), and prints every problem with its fix. ${CONFIG_SOURCES}

Options:
  --offline   skip the calls to the platforms and the model endpoint
  --help      this text

Exit codes: 0 no fatal problem (warnings aside), 1 a problem that would stop the bot.
`,
  status: `usage: gatehouse status [--deep]

Whether the bot runs (the pid file and status snapshot in the data folder), what it serves, what it
is busy with, and the approvals pending in the store. ${CONFIG_SOURCES}

Options:
  --deep   also probe every configured channel, the model endpoint and each MCP server (3 s each)
  --help   this text

Exit codes: 0 running (and, with --deep, every probe passed), 1 not running or a probe failed,
2 invalid configuration.
`,
  logs: `usage: gatehouse logs [--follow] [--json] [--trace ID] [--session KEY] [--since 10m]

Reads the bot's log files (<data dir>/logs/gatehouse.log and its rotated copies, oldest first) and
prints one line per event.

Options:
  --trace ID      one message's whole story (the id a failed reply ends with: "ref 3fa1c09b2e")
  --session KEY   one conversation, e.g. slack:C0123:1712345678.000100 or telegram:42
  --since WHEN    only recent lines: 30s, 10m, 2h, 1d, or a date such as 2025-01-31T09:00
  --json          the raw JSON lines, for jq
  -f, --follow    keep printing new lines as the bot writes them; Ctrl-C ends it
  --help          this text

Exit codes: 0 printed, 1 no log file yet (or no line carries the trace id), 2 bad usage.
`,
  explain: `usage: gatehouse explain --channel C --sender S [--conversation ID] [--no-mcp]

Lists every tool: whether it is offered to that sender on that channel (and in that conversation),
whether it needs an approval, and which rule decided. ${CONFIG_SOURCES}

Options:
  --channel C          console, slack, discord or telegram
  --sender S           the sender's platform id, e.g. U024ADMIN
  --conversation ID    the conversation, to apply byConversation rules and remembered "Always" answers
  --no-mcp             do not start the MCP servers to list their tools
  --help               this text
`,
  approvals: `usage: gatehouse approvals list | export | verify | suggest | always

The decision log: every approval request and decision (who asked, the tool, its argument hash and
summary, who decided, when, and the source: person, policy, always, timeout, non-interactive), the
calls policy refused or hooks blocked, and policy changes seen at start. Append-only, each entry
chained to the one before by a hash. It reads the store the bot uses (the data folder, or
DATABASE_URL). ${CONFIG_SOURCES}

  list [--tool T] [--by U] [--since 7d] [--limit N] [--json]
      the entries as a table, oldest first; --tool a tool name or pattern (github__*), --by a
      person's id or name (where they asked or decided), --since 30m, 12h, 7d or a date, --limit
      the newest N, --json one JSON object per line
  export [--format jsonl|csv]
      every entry on stdout: JSON lines (default; each entry with its seq, prevHash and hash) or
      CSV (a field starting with = + - @ gets a leading ' so that a spreadsheet does not run it)
  verify [--file EXPORT.jsonl]
      checks the chain of the store's log (or of an exported file): exit 0 "N entries, chain
      intact", exit 1 naming the first entry that was edited, removed or moved. Entries removed
      from the end leave no trace in the chain: note the head it prints to compare later
  suggest [--min N] [--no-mcp]
      config rules the log supports: a tool (or, for shell, a command's leading words) that
      people approved in N (default 5) or more requests, none denied or timed out, becomes an
      approval.autoApprove entry when it only reads or its MCP server marks it non-destructive,
      else an approver rule naming those people. Shell and other exec tools are never
      auto-approved. Prints the evidence as comments, then a JSON fragment of the config.
      --no-mcp: do not start the MCP servers to learn their tools' risk (their tools then get
      approver rules only)
  always [--scope S] [--json] | always --revoke ID
      every remembered "Always" decision with its id: the tool, for whom, when it was given and
      when it expires (approval.alwaysTtl), and its scope; --scope a kind (session, conversation,
      sender) or one scope as listed and the narrower ones within it; --revoke forgets one, so the
      tool asks again from its next call (people do the same with /always in their thread)

Options:
  --help   this text

Exit codes: 0 done (verify: chain intact), 1 verify found a break (always --revoke: no such id), 2 bad usage.
`,
  receipts: `usage: gatehouse receipts verify <receipt> --tool NAME [--args JSON] --output-file FILE

Checks that a receipt (gr1.…) was issued by this bot's key for exactly that tool, those arguments
and that output. Without --args, the arguments stored with the receipt are used.

Options:
  --tool NAME           the tool that ran
  --args JSON           its arguments, with the approval marker, e.g. '{"command":"ls","approved":"approved-by-person"}'
  --output-file FILE    the tool's full output
  --help                this text

Exit codes: 0 valid, 1 invalid, 2 bad usage or no key.
`,
  config: `usage: gatehouse config schema | show | docs

  schema   prints the JSON Schema of the config file (the one committed as config.schema.json);
           put "$schema": "./config.schema.json" in the file for completion in an editor
  show     prints the configuration the bot would run with (file, environment and defaults
           merged), secrets masked
  docs     prints the reference of every key, its type, default and meaning (docs/config.md)

Options:
  --help   this text
`,
  schedules: `usage: gatehouse schedules [list] | gatehouse schedules run <name>

  list         each schedule's cron, next run and last run
  run <name>   the running bot runs that schedule within a few seconds

Options:
  --help   this text
`,
  slack: `usage: gatehouse slack manifest [--http --url https://your.host]

Prints the Slack app manifest to paste at https://api.slack.com/apps → Create New App → From an app
manifest. Without --http: Socket Mode (no public URL; set SLACK_APP_TOKEN). With --http: the HTTP
Events API, with every request URL set to <url>/slack/events (set SLACK_SIGNING_SECRET and PORT).

Options:
  --http        the HTTP Events API instead of Socket Mode
  --url URL     the bot's public base URL (required with --http), e.g. https://bot.example.com
  --help        this text
`,
  discord: `usage: gatehouse discord invite [--client-id ID]

Prints the URL that adds the bot to a server with exactly the scopes and permissions it needs. The
application id is read from Discord with DISCORD_TOKEN, unless --client-id gives it.

Options:
  --client-id ID   the application id (Developer Portal → General Information)
  --help           this text
`,
};

/** Whether argv asks for help (`--help` or `-h` anywhere). */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}
