/**
 * Remembered "always" decisions as both stores keep them: the row shape of `always_rules`, its
 * mapping to AlwaysRule, and the short ids that name a decision on a Revoke button.
 */
import { randomBytes } from "node:crypto";
import type { AlwaysRule, RememberAlwaysOptions } from "./store.ts";

/** An `always_rules` row as both stores read it (BIGINTs already numbers). */
export interface AlwaysRow {
  id: string;
  scope: string;
  tool: string;
  created_at: number;
  expires_at: number | null;
  person_name: string | null;
}

/** The columns every read of `always_rules` selects, in row order. */
export const ALWAYS_COLUMNS = "id, scope, tool, created_at, expires_at, person_name";

/** A new decision id: 12 URL-safe characters, short enough for any button payload. */
export function newAlwaysId(): string {
  return randomBytes(9).toString("base64url");
}

/** The row values of a decision to remember, in column order. */
export function alwaysValues(scope: string, tool: string, at: number, options: RememberAlwaysOptions = {}) {
  return {
    id: options.id ?? newAlwaysId(),
    scope,
    tool,
    created_at: at,
    expires_at: options.expiresAt ?? null,
    person_name: options.personName ?? null,
  };
}

export function alwaysFromRow(row: AlwaysRow): AlwaysRule {
  const rule: AlwaysRule = { id: row.id, scope: row.scope, tool: row.tool, createdAt: row.created_at };
  if (row.expires_at !== null) rule.expiresAt = row.expires_at;
  if (row.person_name !== null) rule.personName = row.person_name;
  return rule;
}
