/**
 * The hash chain of the audit log (the decision log): each entry carries a sequence number, the
 * hash of the entry before it and its own hash, sha256 over that previous hash and a canonical
 * serialization of the entry's fields. Editing, removing or reordering a stored entry breaks the
 * chain at that entry (`gatehouse approvals verify`). Both stores append through `chainEntry`, so a
 * log written by either verifies the same way, and a copied log (`gatehouse store copy`) is chained
 * again in its destination.
 *
 * Entries written before the chain existed (a database upgraded by the migration that added it)
 * keep no chain fields: the chain starts after them, with `GENESIS_HASH` as the first entry's
 * previous hash, and `verify` counts them as not covered.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../observe/canonical-json.ts";
import type { AuditEntry } from "./store.ts";

/** The previous hash of the first chained entry. */
export const GENESIS_HASH = "0".repeat(64);

/** The chain fields of a stored entry. */
export interface ChainLink {
  seq: number;
  prevHash: string;
  hash: string;
}

/**
 * The hash of the entry at `seq` that follows `prevHash`: sha256 hex of the previous hash, a line
 * break, and the canonical JSON of `seq` with the entry's fields (absent fields left out, so a
 * column added later does not change the hash of entries written before it).
 */
export function auditEntryHash(prevHash: string, seq: number, entry: AuditEntry): string {
  return createHash("sha256").update(`${prevHash}\n${canonicalJson({ ...fieldsOf(entry), seq })}`).digest("hex");
}

/**
 * The entry as it will read back from either store, and its link after `tail` (the last chained
 * entry, absent for the first): `at` a whole number, strings well-formed UTF-16 (a lone surrogate
 * would not survive the database's UTF-8), absent fields dropped.
 */
export function chainEntry(entry: AuditEntry, tail: { seq: number; hash: string } | undefined): { entry: AuditEntry; link: ChainLink } {
  const stored = fieldsOf(entry);
  const seq = (tail?.seq ?? 0) + 1;
  const prevHash = tail?.hash ?? GENESIS_HASH;
  return { entry: stored, link: { seq, prevHash, hash: auditEntryHash(prevHash, seq, stored) } };
}

/** Keys of a read-back entry that are not its fields: its row and its link. */
const NOT_FIELDS = new Set(["row", "seq", "prevHash", "hash"]);

function fieldsOf(entry: AuditEntry): AuditEntry {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (value === undefined || value === null || NOT_FIELDS.has(key)) continue;
    out[key] = typeof value === "string" ? value.toWellFormed() : key === "at" ? Math.trunc(value as number) : value;
  }
  return out as unknown as AuditEntry;
}
