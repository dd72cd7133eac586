/**
 * Checks the decision log's hash chain (`gatehouse approvals verify`): every chained entry's hash
 * must be the hash of its own fields, its sequence number must follow the one before it, and its
 * link must be the hash of the entry before it. The first entry where one of these fails is named,
 * with what most likely happened there: an edited entry, removed entries, or entries out of order.
 *
 * What a chain alone cannot show: entries removed from the end. `verify` prints the head (the last
 * entry's number and hash) so that it can be noted elsewhere and compared later.
 */
import { auditEntryHash, GENESIS_HASH } from "../store/audit-chain.ts";
import type { LoggedAuditEntry } from "../store/store.ts";

/** Where the chain broke. */
export interface ChainBreak {
  /** The entry's row in the table (or line in an exported file). */
  row: number;
  seq?: number;
  kind: string;
  at: number;
  problem: string;
}

/** The outcome of a check. */
export interface ChainVerdict {
  intact: boolean;
  /** Chained entries checked (up to the break). */
  checked: number;
  /** Entries from before the chain began, which it does not cover. */
  unchained: number;
  /** The last entry checked that was intact. */
  head?: { seq: number; hash: string };
  broken?: ChainBreak;
}

/** Checks entries in the order they were appended (by row), stopping at the first break. */
export async function verifyDecisionLog(entries: AsyncIterable<LoggedAuditEntry> | Iterable<LoggedAuditEntry>): Promise<ChainVerdict> {
  let head: { seq: number; hash: string } | undefined;
  let checked = 0;
  let unchained = 0;
  const stop = (entry: LoggedAuditEntry, problem: string): ChainVerdict => ({
    intact: false, checked, unchained, head,
    broken: { row: entry.row, seq: entry.seq, kind: entry.kind, at: entry.at, problem },
  });
  for await (const entry of entries) {
    if (entry.seq === undefined || entry.prevHash === undefined || entry.hash === undefined) {
      if (checked === 0) {
        unchained++;
        continue;
      }
      return stop(entry, `an entry after #${head?.seq ?? 0} has no link in the chain: it was written or changed outside Gatehouse`);
    }
    const expected = (head?.seq ?? 0) + 1;
    if (auditEntryHash(entry.prevHash, entry.seq, entry) !== entry.hash) {
      return stop(entry, `entry #${entry.seq} does not match its hash: it was edited after it was written`);
    }
    if (entry.seq > expected) {
      const missing = entry.seq - 1 === expected ? `#${expected} is` : `#${expected}…#${entry.seq - 1} are`;
      return stop(entry, `entry #${entry.seq} comes where #${expected} should: ${missing} missing here (removed, or moved)`);
    }
    if (entry.seq < expected) {
      return stop(entry, `entry #${entry.seq} comes after #${expected - 1}: entries are out of order (reordered or copied in)`);
    }
    if (entry.prevHash !== (head?.hash ?? GENESIS_HASH)) {
      return stop(entry, head
        ? `entry #${entry.seq} does not link to #${head.seq}: #${head.seq} was changed and its hash recomputed, or the link of #${entry.seq} was edited`
        : `entry #${entry.seq} does not start the chain: the entries before it were removed or replaced`);
    }
    head = { seq: entry.seq, hash: entry.hash };
    checked++;
  }
  return { intact: true, checked, unchained, head };
}

/** The one-line result `verify` prints. */
export function describeVerdict(verdict: ChainVerdict): string {
  const older = verdict.unchained ? `; ${verdict.unchained} older ${verdict.unchained === 1 ? "entry" : "entries"} from before the chain began are not covered` : "";
  if (verdict.intact) {
    const head = verdict.head ? ` (head #${verdict.head.seq} ${verdict.head.hash})` : "";
    return `${verdict.checked} ${verdict.checked === 1 ? "entry" : "entries"}, chain intact${head}${older}`;
  }
  const b = verdict.broken!;
  return `chain BROKEN at row ${b.row} (${b.kind} at ${new Date(b.at).toISOString()}): ${b.problem}. ${verdict.checked} ${verdict.checked === 1 ? "entry" : "entries"} before it are intact${older}`;
}
