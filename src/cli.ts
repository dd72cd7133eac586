/**
 * The `gatehouse` command: start, doctor, status, logs, explain, approvals, receipts verify, store copy,
 * schedules, config, slack manifest, discord invite. Every command takes `--help`; `--version`
 * prints the package version. The CLI's own output goes to stdout/stderr; configuration errors are
 * printed without a stack trace.
 */
import { ConfigError } from "./config/load.ts";
import { COMMAND_HELP, packageVersion, wantsHelp } from "./cli/help.ts";

const USAGE = `Usage: gatehouse <command> [options]

Commands:
  start [--demo]                run the bot in the foreground (npm start; --demo: the built-in demo model)
  doctor                        check configuration and environment, with fixes
  status [--deep]               is the bot running; channels, model, MCP, turns, approvals
  logs [--follow] [--json] [--trace ID] [--session KEY] [--since 10m]
                                read the bot's log as a timeline
  explain --channel C --sender S [--conversation ID]
                                which tools are offered to whom, and which rule decided
  approvals list | export | verify | suggest | always
                                the decision log: every approval asked and decided, who and
                                how; its hash chain checked; config rules it supports
  receipts verify <receipt> --tool NAME --args JSON --output-file FILE
                                check a tool-execution receipt
  store copy --from DIR [--to URL] [--force]
                                copy the SQLite store into PostgreSQL (DATABASE_URL),
                                for several replicas
  schedules [list] | schedules run NAME
                                scheduled tasks with their next and last run; run one now
  config schema | show | docs   the config file's JSON Schema, the effective config (secrets
                                masked), the reference of every key
  slack manifest [--http --url URL]
                                the Slack app manifest, for Socket Mode or the HTTP Events API
  discord invite                the URL that adds the bot to a server, with the permissions it needs

  gatehouse <command> --help    what a command does and takes
  gatehouse --version           the version
`;

type Command = (argv: string[]) => Promise<number>;

// Each command's module loads when it runs: the bot's start never loads what only doctor or status needs.
const COMMANDS: Record<string, Command> = {
  start: async (argv) => (await import("./cli/start.ts")).runStart(argv),
  explain: async (argv) => (await import("./cli/explain.ts")).runExplain(argv),
  approvals: async (argv) => (await import("./cli/approvals.ts")).runApprovals(argv),
  receipts: async (argv) => (await import("./cli/receipts.ts")).runReceipts(argv),
  doctor: async (argv) => (await import("./cli/doctor.ts")).runDoctor(argv),
  status: async (argv) => (await import("./cli/status.ts")).runStatus(argv),
  logs: async (argv) => (await import("./cli/logs.ts")).runLogs(argv),
  store: async (argv) => (await import("./cli/store-copy.ts")).runStore(argv),
  schedules: async (argv) => (await import("./cli/schedules.ts")).runSchedules(argv),
  config: async (argv) => (await import("./cli/config.ts")).runConfig(argv),
  slack: async (argv) => (await import("./cli/slack-manifest.ts")).runSlack(argv),
  discord: async (argv) => (await import("./cli/discord-invite.ts")).runDiscord(argv),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-v" || name === "version") {
    process.stdout.write(`gatehouse ${packageVersion()}\n`);
    return 0;
  }
  if (name === "help" && rest[0] && COMMANDS[rest[0]]) return help(rest[0]);
  if (!name || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(USAGE);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`gatehouse: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if (wantsHelp(rest) && COMMAND_HELP[name]) return help(name);
  try {
    return await command(rest);
  } catch (err) {
    // An unknown option or a missing value: say so, and where the command's options are listed.
    const code = (err as NodeJS.ErrnoException).code;
    if (!code?.startsWith("ERR_PARSE_ARGS")) throw err;
    process.stderr.write(`gatehouse ${name}: ${(err as Error).message.split(". To specify a positional argument")[0]}\nSee \`gatehouse ${name} --help\`.\n`);
    return 2;
  }
}

async function help(name: string): Promise<number> {
  // `store` keeps its own, longer help text.
  if (!COMMAND_HELP[name]) return COMMANDS[name]!(["--help"]);
  process.stdout.write(COMMAND_HELP[name]);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`gatehouse: ${message}\n`);
    if (process.env.LOG_LEVEL === "debug" && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  },
);
