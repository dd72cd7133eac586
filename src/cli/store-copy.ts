/**
 * `gatehouse store copy --from <data dir> [--to <postgres url>] [--force]`: copies the embedded
 * SQLite store of a data folder into the PostgreSQL database the replicas will share (the copy
 * itself is src/store/copy-store.ts). Exit code 0 when copied, 1 when it failed or was refused,
 * 2 for bad usage. The database's password is never printed.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { rawConfig } from "../config/load.ts";
import { readRuntimeStatus } from "../observe/runtime-status.ts";
import { copyStore, describeCounts, DestinationNotEmptyError, KIND_LABELS, StoreCopyError, type CopyReport } from "../store/copy-store.ts";
import { DatabaseUrlError, describeDatabaseUrl, scrubSecrets, type DatabaseUrlInfo } from "../store/database-url.ts";
import { DATABASE_FILE, openSqliteStore } from "../store/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { readArgs } from "./args.ts";

const USAGE = "usage: gatehouse store copy --from <data dir> [--to <postgres url>] [--force]\n";

const HELP = `${USAGE}
Copies everything the embedded SQLite store in <data dir> (its ${DATABASE_FILE}) holds into the
PostgreSQL database named by --to, else by DATABASE_URL: for moving from one process to several
replicas. Stop the bot first, so that nothing changes while it copies.

Copied:
  sessions        with their current history, in order, and their times
  approvals       pending and decided
  turn records    turns parked on an approval, and checkpoints of turns in progress
  receipts, the audit log and the remembered Always rules
  values          the Telegram update offset, MCP tool activations, markers of unanswered messages
Not copied:
  a session's history from before its last /new (the bot no longer loads it), and the marks of
  recently seen events (inbound dedupe). A copied message is dated at its session's last activity.

The copy refuses a destination that already holds data, so running it twice copies nothing
twice. --force copies into it anyway and keeps what is there: a session, approval, turn, receipt,
value or Always rule already in the destination is left as it is, and an audit entry already there
is not added again. That also completes a copy that stopped half-way.

Options:
  --from <dir>    the data folder the bot used (GATEHOUSE_DATA_DIR; ./data by default)
  --to <url>      postgres://user:password@host:5432/database (default: DATABASE_URL)
  --force         copy into a destination that is not empty, keeping what it holds
  --help          this text

Exit codes: 0 copied, 1 failed or refused, 2 bad usage.
`;

/** A status snapshot older than this means the bot in that folder is no longer running. */
const STALE_SNAPSHOT_MS = 30_000;

/** `gatehouse store <subcommand>`; only `copy` exists. */
export async function runStore(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  if (sub !== "copy") {
    process.stderr.write(sub ? `gatehouse store: unknown subcommand "${sub}"\n${USAGE}` : USAGE);
    return 2;
  }
  return runStoreCopy(rest);
}

async function runStoreCopy(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof readArgs>;
  try {
    parsed = readArgs(argv, {
      from: { type: "string" },
      to: { type: "string" },
      force: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    });
  } catch (err) {
    // parseArgs names the option, never its value, so a URL given with a typo stays unprinted.
    // Its advice on positionals that start with "-" is of no use here.
    return usageError((err as Error).message.split(". To specify a positional argument")[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [extra] = positionals;
  if (extra !== undefined) {
    // Not echoed when it may be the database URL, password and all.
    return usageError(extra.includes("://") ? "pass the database URL with --to, or in DATABASE_URL" : `unexpected argument "${extra}" (did you mean --from ${extra}?)`);
  }
  const from = values.from as string | undefined;
  if (!from) return usageError("--from <data dir> is required: the data folder whose store to copy.");
  const url = (values.to as string | undefined)?.trim() || configuredDatabaseUrl();
  if (!url) return usageError("no destination: set DATABASE_URL=postgres://… or pass --to postgres://…");
  let where: DatabaseUrlInfo;
  try {
    where = describeDatabaseUrl(url);
  } catch (err) {
    if (!(err instanceof DatabaseUrlError)) throw err;
    return usageError(values.to ? err.message.replace(/^DATABASE_URL/, "--to") : err.message);
  }

  const dataDir = path.resolve(from);
  const file = path.join(dataDir, DATABASE_FILE);
  if (!existsSync(file)) {
    return fail(`No Gatehouse store at ${file}. Pass the data folder the bot used (GATEHOUSE_DATA_DIR, ./data by default).`);
  }
  const running = runningBot(dataDir);
  if (running) return fail(`The bot is running on ${dataDir} (pid ${running}). Stop it first, so that the copy is complete.`);

  const scrub = (text: string): string => scrubSecrets(text, where.secrets);
  const opened: Store[] = [];
  try {
    const source = await openSqliteStore({ dataDir });
    opened.push(source);
    // Loaded only here, like open-store.ts does, so that the rest of the CLI never loads pg.
    const { openPostgresStore } = await import("../store/postgres-store.ts");
    const destination = await openPostgresStore({ url, maxConnections: 2 });
    opened.push(destination);
    const report = await copyStore(source, destination, { force: Boolean(values.force) });
    process.stdout.write(formatReport(file, where.display, report));
    return 0;
  } catch (err) {
    if (err instanceof DestinationNotEmptyError) {
      return fail(
        `${where.display} already holds ${describeCounts(err.contents)}; nothing was copied. ` +
          `Point --to or DATABASE_URL at an empty database, or pass --force to copy into it and keep what it holds.`,
      );
    }
    if (err instanceof StoreCopyError) {
      const done = describeCounts(err.report.copied);
      return fail(
        `${scrub(err.message)}\nCopied before it failed: ${done}. Fix the cause and run the same command with --force: ` +
          `what was copied is kept, and nothing is copied twice.`,
      );
    }
    return fail(scrub(err instanceof Error ? err.message : String(err)));
  } finally {
    await Promise.all(opened.map((store) => store.close().catch(() => undefined)));
  }
}

/** The database URL from the config file or the environment (with `.env`), read leniently. */
function configuredDatabaseUrl(): string | undefined {
  let configured: unknown;
  try {
    configured = rawConfig().raw.databaseUrl;
  } catch {
    // An unreadable config file: the environment alone decides.
    configured = process.env.DATABASE_URL;
  }
  return typeof configured === "string" && configured.trim() ? configured.trim() : undefined;
}

/** The pid of a bot running on the data folder (alive and refreshing its status), if any. */
function runningBot(dataDir: string): number | undefined {
  const runtime = readRuntimeStatus(dataDir);
  if (!runtime?.alive || runtime.snapshot?.pid !== runtime.pid) return undefined;
  const age = Date.now() - Date.parse(runtime.snapshot.updatedAt);
  return age < STALE_SNAPSHOT_MS ? runtime.pid : undefined;
}

function formatReport(file: string, destination: string, report: CopyReport): string {
  const kept = Object.values(report.alreadyThere).some((n) => n > 0);
  const lines = [`Copied ${file} into ${destination}:`];
  for (const [kind, , many] of KIND_LABELS) {
    const there = report.alreadyThere[kind];
    const note = there > 0 ? `  (${there} already there, kept)` : "";
    lines.push(`  ${`${many}:`.padEnd(18)}${String(report.copied[kind]).padStart(7)}${note}`);
  }
  if (!kept) lines.push("", "Start the replicas with DATABASE_URL set to this database.");
  return `${lines.join("\n")}\n`;
}

function usageError(message: string): number {
  process.stderr.write(`gatehouse store copy: ${message}\n${USAGE}Run \`gatehouse store copy --help\` for what is copied.\n`);
  return 2;
}

function fail(message: string): number {
  process.stderr.write(`gatehouse store copy: ${message}\n`);
  return 1;
}
