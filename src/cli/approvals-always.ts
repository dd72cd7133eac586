/**
 * `gatehouse approvals always [--scope S] [--json]` and `gatehouse approvals always --revoke <id>`:
 * every remembered "Always" decision across threads, conversations and people, read from the store
 * the bot uses (the SQLite file in the data folder, or DATABASE_URL), and revoking one by its id.
 * A revoke takes effect at the next call of that tool (the bot reads the store each time) and is
 * written to the decision log. Its help is part of `gatehouse approvals --help` (help.ts).
 */
import { userInfo } from "node:os";
import { loadConfig } from "../config/load.ts";
import { parseAlwaysScope } from "../policy/always-scope.ts";
import { openStore } from "../store/open-store.ts";
import type { AlwaysRule, Store } from "../store/store.ts";
import { readArgs } from "./args.ts";

/** The subcommand's usage line. */
export const ALWAYS_USAGE = "always [--scope S] [--json] | always --revoke ID";

const KINDS = new Set(["session", "conversation", "sender"]);

/** "2025-01-31 09:00 UTC". */
const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** Who a decision covers: the person its scope names (with their name when known), or everyone there. */
function whom(rule: AlwaysRule): string {
  const person = parseAlwaysScope(rule.scope)?.person;
  if (person === undefined) return "everyone there";
  return rule.personName ? `${rule.personName} (${person})` : person;
}

function expiry(rule: AlwaysRule, now: number): string {
  if (rule.expiresAt === undefined) return "never";
  return `${rule.expiresAt <= now ? "expired " : ""}${when(rule.expiresAt)}`;
}

async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

function fail(message: string): number {
  process.stderr.write(`gatehouse approvals always: ${message}\nusage: gatehouse approvals ${ALWAYS_USAGE}\n`);
  return 2;
}

/** Lays rows out in columns, each as wide as its widest cell. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd()).join("\n");
}

async function revoke(id: string): Promise<number> {
  return withStore(async (store) => {
    const removed = await store.revokeAlways(id);
    if (!removed) {
      process.stderr.write(`No remembered decision has the id "${id}"; list them with \`gatehouse approvals always\`.\n`);
      return 1;
    }
    const operator = safeUserName();
    await store.appendAudit({
      at: Date.now(), kind: "always.revoked", tool: removed.tool, source: "cli", outcome: "revoked", detail: removed.scope,
      ...(operator ? { actorName: operator } : {}),
    });
    process.stdout.write(`Revoked ${removed.id}: ${removed.tool} for ${whom(removed)} in ${removed.scope}. It asks again from its next call.\n`);
    return 0;
  });
}

/** `gatehouse approvals always …`. */
export async function runApprovalsAlways(argv: string[]): Promise<number> {
  const { values, positionals } = readArgs(argv, { scope: { type: "string" }, json: { type: "boolean" }, revoke: { type: "string" } });
  if (positionals.length) return fail(`unexpected "${positionals[0]}"`);
  if (typeof values.revoke === "string") {
    if (values.scope !== undefined || values.json) return fail("--revoke takes no other option");
    if (!/^[A-Za-z0-9_-]{4,24}$/.test(values.revoke)) return fail(`"${values.revoke}" is not a decision id (ids are listed in the first column)`);
    return revoke(values.revoke);
  }
  const scope = values.scope as string | undefined;
  if (scope !== undefined && !KINDS.has(scope) && !parseAlwaysScope(scope)) {
    return fail(`--scope "${scope}" is neither session, conversation or sender, nor a scope as listed (session:…, conversation:…, sender:…)`);
  }
  return withStore(async (store) => {
    const now = Date.now();
    const all = await store.listAlwaysRules(scope === undefined || KINDS.has(scope) ? {} : { under: scope });
    const rules = scope !== undefined && KINDS.has(scope) ? all.filter((r) => parseAlwaysScope(r.scope)?.kind === scope) : all;
    if (values.json) {
      for (const r of rules) {
        const parts = parseAlwaysScope(r.scope);
        process.stdout.write(`${JSON.stringify({
          id: r.id, tool: r.tool, scope: r.scope, kind: parts?.kind, place: parts?.place, person: parts?.person ?? null,
          personName: r.personName ?? null, givenAt: new Date(r.createdAt).toISOString(),
          expiresAt: r.expiresAt === undefined ? null : new Date(r.expiresAt).toISOString(), expired: r.expiresAt !== undefined && r.expiresAt <= now,
        })}\n`);
      }
      return 0;
    }
    if (!rules.length) {
      process.stdout.write(scope === undefined ? "No remembered \"Always\" decisions.\n" : `No remembered "Always" decisions in ${scope}.\n`);
      return 0;
    }
    const rows = [["ID", "TOOL", "WHO", "GIVEN", "EXPIRES", "SCOPE"], ...rules.map((r) => [r.id, r.tool, whom(r), when(r.createdAt), expiry(r, now), r.scope])];
    process.stdout.write(`${table(rows)}\n`);
    return 0;
  });
}

function safeUserName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}
