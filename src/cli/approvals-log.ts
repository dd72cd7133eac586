/**
 * `gatehouse approvals list | export | verify`: the decision log read from the store the bot uses
 * (the SQLite file in the data folder, or DATABASE_URL), page by page.
 * - list: a table (or JSON lines with --json) of the entries that pass the filters;
 * - export: every entry as JSON lines or CSV on stdout;
 * - verify: checks the hash chain of the store's log, or of an exported JSON-lines file.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { loadConfig } from "../config/load.ts";
import { matchesDecisionFilter, readDecisionLog, type DecisionLogFilter } from "../approval/decision-log.ts";
import { csvHeader, csvLine, jsonLine, tableHeader, tableLine } from "../approval/decision-log-format.ts";
import { describeVerdict, verifyDecisionLog, type ChainVerdict } from "../approval/decision-log-verify.ts";
import { openStore } from "../store/open-store.ts";
import type { LoggedAuditEntry, Store } from "../store/store.ts";
import { readArgs } from "./args.ts";
import { parseSince } from "./log-timeline.ts";

/** Opens the store of the configured bot, runs `work` on it, and closes it. */
async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Collects output lines and writes them in large pieces. */
class Output {
  #buffered: string[] = [];
  #size = 0;
  line(text: string): void {
    this.#buffered.push(text, "\n");
    this.#size += text.length + 1;
    if (this.#size > 64_000) this.flush();
  }
  flush(): void {
    if (this.#buffered.length) process.stdout.write(this.#buffered.join(""));
    this.#buffered = [];
    this.#size = 0;
  }
}

function fail(message: string, usage: string): number {
  process.stderr.write(`gatehouse approvals: ${message}\nusage: gatehouse approvals ${usage}\n`);
  return 2;
}

const LIST_USAGE = "list [--tool T] [--by U] [--since 7d] [--limit N] [--json]";

/** `approvals list`. */
export async function runApprovalsList(argv: string[]): Promise<number> {
  const { values, positionals } = readArgs(argv, {
    tool: { type: "string" }, by: { type: "string" }, since: { type: "string" }, limit: { type: "string" }, json: { type: "boolean" },
  });
  if (positionals.length) return fail(`unexpected "${positionals[0]}"`, LIST_USAGE);
  const filter: DecisionLogFilter = { tool: values.tool as string | undefined, by: values.by as string | undefined };
  if (typeof values.since === "string") {
    filter.since = parseSince(values.since);
    if (filter.since === undefined) return fail(`--since "${values.since}" is neither a duration (30m, 12h, 7d) nor a date`, LIST_USAGE);
  }
  let limit: number | undefined;
  if (typeof values.limit === "string") {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) return fail(`--limit must be a whole number of entries, 1 or more (not "${values.limit}")`, LIST_USAGE);
  }
  const json = Boolean(values.json);
  return withStore(async (store) => {
    const out = new Output();
    const show = (entry: LoggedAuditEntry) => out.line(json ? jsonLine(entry) : tableLine(entry));
    // Only the newest `limit` are shown: they are kept back until the log has been read.
    const kept: LoggedAuditEntry[] = [];
    let shown = 0;
    for await (const entry of readDecisionLog(store)) {
      if (!matchesDecisionFilter(entry, filter)) continue;
      if (!json && shown === 0 && limit === undefined) out.line(tableHeader());
      shown++;
      if (limit === undefined) show(entry);
      else if (kept.push(entry) > limit) kept.shift();
    }
    if (!json && limit !== undefined && kept.length) out.line(tableHeader());
    kept.forEach(show);
    out.flush();
    if (shown === 0 && !json) {
      const filtered = filter.tool !== undefined || filter.by !== undefined || filter.since !== undefined;
      process.stderr.write(filtered ? "No entry of the decision log matches these filters.\n" : "The decision log is empty: no approval has been asked or decided yet.\n");
    }
    return 0;
  });
}

const EXPORT_USAGE = "export [--format jsonl|csv]";

/** `approvals export`. */
export async function runApprovalsExport(argv: string[]): Promise<number> {
  const { values, positionals } = readArgs(argv, { format: { type: "string" } });
  if (positionals.length) return fail(`unexpected "${positionals[0]}"`, EXPORT_USAGE);
  const format = (values.format as string | undefined) ?? "jsonl";
  if (format !== "jsonl" && format !== "csv") return fail(`--format must be jsonl or csv (not "${format}")`, EXPORT_USAGE);
  return withStore(async (store) => {
    const out = new Output();
    if (format === "csv") out.line(csvHeader());
    for await (const entry of readDecisionLog(store)) out.line(format === "csv" ? csvLine(entry) : jsonLine(entry));
    out.flush();
    return 0;
  });
}

const VERIFY_USAGE = "verify [--file EXPORT.jsonl]";

/** `approvals verify`. */
export async function runApprovalsVerify(argv: string[]): Promise<number> {
  const { values, positionals } = readArgs(argv, { file: { type: "string" } });
  if (positionals.length) return fail(`unexpected "${positionals[0]}"`, VERIFY_USAGE);
  let verdict: ChainVerdict;
  if (typeof values.file === "string") {
    let text: string;
    try {
      text = readFileSync(values.file, "utf8");
    } catch (err) {
      process.stderr.write(`gatehouse approvals: cannot read ${values.file}: ${(err as Error).message}\n`);
      return 2;
    }
    const entries = exportedEntries(text);
    if (typeof entries === "string") {
      process.stdout.write(`${values.file}: ${entries}\n`);
      return 1;
    }
    verdict = await verifyDecisionLog(entries);
  } else {
    verdict = await withStore((store) => verifyDecisionLog(readDecisionLog(store)));
  }
  process.stdout.write(`${describeVerdict(verdict)}\n`);
  return verdict.intact ? 0 : 1;
}

const optionalText = z.string().optional();
/** One line of `approvals export --format jsonl`. */
const ExportedEntry = z.looseObject({
  at: z.number(), kind: z.string(), seq: z.number().int().optional(), prevHash: optionalText, hash: optionalText,
});

/** The entries of an exported file, each numbered by its line; or what is wrong with a line. */
function exportedEntries(text: string): LoggedAuditEntry[] | string {
  const entries: LoggedAuditEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return `line ${i + 1} is not JSON: not a file written by \`gatehouse approvals export --format jsonl\``;
    }
    const entry = ExportedEntry.safeParse(parsed);
    if (!entry.success) return `line ${i + 1} is not a decision-log entry (it needs "at" and "kind")`;
    entries.push({ ...(entry.data as unknown as LoggedAuditEntry), row: i + 1 });
  }
  return entries;
}
