/**
 * The `gatehouse` command: start, doctor, status, logs, explain, receipts verify, store copy.
 * The CLI's own output goes to stdout/stderr; configuration errors are printed without a stack trace.
 */
import { ConfigError } from "./config/load.ts";
import { runStart } from "./cli/start.ts";
import { runExplain } from "./cli/explain.ts";
import { runReceipts } from "./cli/receipts.ts";
import { runDoctor } from "./cli/doctor.ts";
import { runStatus } from "./cli/status.ts";
import { runLogs } from "./cli/logs.ts";
import { runStore } from "./cli/store-copy.ts";
import { runSchedules } from "./cli/schedules.ts";

const USAGE = `Usage: gatehouse <command> [options]

Commands:
  start                         run the bot in the foreground (npm start)
  doctor                        check configuration and environment, with fixes
  status [--deep]               is the bot running; channels, model, MCP, turns, approvals
  logs [--follow] [--json] [--trace ID] [--session KEY] [--since 10m]
                                read the bot's log as a timeline
  explain --channel C --sender S [--conversation ID]
                                which tools are offered to whom, and which rule decided
  receipts verify <receipt> --tool NAME --args JSON --output-file FILE
                                check a tool-execution receipt
  store copy --from DIR [--to URL] [--force]
                                copy the SQLite store into PostgreSQL (DATABASE_URL),
                                for several replicas
  schedules [list] | schedules run NAME
                                scheduled tasks with their next and last run; run one now
`;

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  start: () => runStart(),
  explain: (argv) => runExplain(argv),
  receipts: (argv) => runReceipts(argv),
  doctor: (argv) => runDoctor(argv),
  status: (argv) => runStatus(argv),
  logs: (argv) => runLogs(argv),
  store: (argv) => runStore(argv),
  schedules: (argv) => runSchedules(argv),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(USAGE);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`gatehouse: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  return command(rest);
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
