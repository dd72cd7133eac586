/**
 * Every SQL statement the SQLite store runs, prepared once when the store opens. Parameters are
 * named (`$name`); node:sqlite rejects a parameter object with a key the statement does not use.
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { ALWAYS_COLUMNS } from "./always-rows.ts";

const SQL = {
  begin: `BEGIN IMMEDIATE`,
  commit: `COMMIT`,
  rollback: `ROLLBACK`,
  // Changes when another connection commits (see history-cache.ts).
  dataVersion: `PRAGMA data_version`,
  touchSession: `
    INSERT INTO sessions (key, generation, created_at, updated_at) VALUES ($key, 1, $at, $at)
    ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at
    RETURNING generation`,
  insertMessage: `
    INSERT INTO messages (session_key, generation, at, body) VALUES ($session_key, $generation, $at, $body)`,
  lastMessages: `
    SELECT m.body FROM messages m JOIN sessions s ON s.key = m.session_key AND m.generation = s.generation
    WHERE s.key = $key ORDER BY m.id DESC LIMIT $limit`,
  importSession: `
    INSERT INTO sessions (key, generation, created_at, updated_at) VALUES ($key, 1, $created_at, $updated_at)
    ON CONFLICT (key) DO NOTHING`,
  resetSession: `
    UPDATE sessions SET generation = generation + 1, updated_at = $at WHERE key = $key`,
  listSessions: `
    SELECT s.key, s.created_at, s.updated_at,
      (SELECT count(*) FROM messages m WHERE m.session_key = s.key AND m.generation = s.generation) AS message_count
    FROM sessions s ORDER BY s.updated_at DESC, s.key LIMIT $limit`,

  purgeSeen: `DELETE FROM seen_events WHERE expires_at <= $now`,
  markSeen: `
    INSERT INTO seen_events (channel, event_id, expires_at) VALUES ($channel, $event_id, $expires_at)
    ON CONFLICT (channel, event_id) DO UPDATE SET expires_at = excluded.expires_at
    WHERE seen_events.expires_at <= $now`,

  insertApproval: `
    INSERT INTO approvals (id, session_key, turn_id, call_id, tool, args_hash, args_summary, channel,
      requester_id, requester_name, approvers, target, card_message_id, created_at, expires_at, state,
      decided_by_id, decided_by_name, decided_at, allow_always, approver_rule, decision_reason)
    VALUES ($id, $session_key, $turn_id, $call_id, $tool, $args_hash, $args_summary, $channel,
      $requester_id, $requester_name, $approvers, $target, $card_message_id, $created_at, $expires_at, $state,
      $decided_by_id, $decided_by_name, $decided_at, $allow_always, $approver_rule, $decision_reason)`,
  insertVote: `
    INSERT INTO approval_votes (approval_id, voter_id, voter_name, at)
    SELECT $approval_id, $voter_id, $voter_name, $at WHERE EXISTS (SELECT 1 FROM approvals WHERE id = $approval_id AND state = 'pending')
    ON CONFLICT (approval_id, voter_id) DO NOTHING`,
  listVotes: `SELECT * FROM approval_votes WHERE approval_id = $approval_id ORDER BY at, voter_id`,
  getApproval: `SELECT * FROM approvals WHERE id = $id`,
  setCardMessage: `UPDATE approvals SET card_message_id = $card_message_id WHERE id = $id`,
  decideBeforeExpiry: `
    UPDATE approvals SET state = $state, decided_by_id = $by_id, decided_by_name = $by_name, decided_at = $at, decision_reason = $reason
    WHERE id = $id AND state = 'pending' AND expires_at > $at`,
  decideExpired: `
    UPDATE approvals SET state = $state, decided_by_id = $by_id, decided_by_name = $by_name, decided_at = $at, decision_reason = $reason
    WHERE id = $id AND state = 'pending'`,
  listApprovals: `SELECT * FROM approvals ORDER BY created_at, id`,
  listApprovalsIn: `SELECT * FROM approvals WHERE state = $state ORDER BY created_at, id`,

  // A decision already there stays as it was given, unless it has expired.
  rememberAlways: `
    INSERT INTO always_rules (id, scope, tool, created_at, expires_at, person_name)
    VALUES ($id, $scope, $tool, $created_at, $expires_at, $person_name)
    ON CONFLICT (scope, tool) DO UPDATE SET id = excluded.id, created_at = excluded.created_at,
      expires_at = excluded.expires_at, person_name = excluded.person_name
    WHERE always_rules.expires_at IS NOT NULL AND always_rules.expires_at <= excluded.created_at`,
  hasAlways: `
    SELECT 1 AS found FROM always_rules
    WHERE scope = $scope AND tool = $tool AND (expires_at IS NULL OR expires_at > $now)`,
  forgetAlways: `DELETE FROM always_rules WHERE scope = $scope OR substr(scope, 1, length($scope) + 1) = $scope || '|'`,
  listAlwaysRules: `SELECT ${ALWAYS_COLUMNS} FROM always_rules ORDER BY scope, tool`,
  listAlwaysRulesUnder: `
    SELECT ${ALWAYS_COLUMNS} FROM always_rules
    WHERE scope = $scope OR substr(scope, 1, length($scope) + 1) = $scope || '|' ORDER BY scope, tool`,
  getAlwaysRule: `SELECT ${ALWAYS_COLUMNS} FROM always_rules WHERE id = $id`,
  revokeAlways: `DELETE FROM always_rules WHERE id = $id RETURNING ${ALWAYS_COLUMNS}`,

  insertAudit: `
    INSERT INTO audit (at, kind, trace_id, session_key, channel, tool, args_hash, actor_id, actor_name,
      source, outcome, detail, args_summary, requester_id, requester_name, decided_by_id, decided_by_name, reason,
      seq, prev_hash, hash)
    VALUES ($at, $kind, $trace_id, $session_key, $channel, $tool, $args_hash, $actor_id, $actor_name,
      $source, $outcome, $detail, $args_summary, $requester_id, $requester_name, $decided_by_id, $decided_by_name, $reason,
      $seq, $prev_hash, $hash)`,
  // The last chained entry: the one the next entry links to.
  auditTail: `SELECT seq, hash FROM audit WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1`,
  readAuditLog: `SELECT * FROM audit WHERE id > $after ORDER BY id LIMIT $limit`,
  // The newest N matching entries; the caller puts them back in time order.
  listAudit: `SELECT * FROM audit ORDER BY id DESC LIMIT $limit`,
  listAuditBySession: `SELECT * FROM audit WHERE session_key = $session_key ORDER BY id DESC LIMIT $limit`,
  listAuditByKind: `SELECT * FROM audit WHERE kind = $kind ORDER BY id DESC LIMIT $limit`,
  listAuditBySessionAndKind: `
    SELECT * FROM audit WHERE session_key = $session_key AND kind = $kind ORDER BY id DESC LIMIT $limit`,

  insertReceipt: `
    INSERT INTO receipts (id, at, session_key, call_id, tool, args_canonical, output_hash, mac)
    VALUES ($id, $at, $session_key, $call_id, $tool, $args_canonical, $output_hash, $mac)
    ON CONFLICT (id) DO NOTHING`,
  getReceipt: `SELECT * FROM receipts WHERE id = $id`,
  listReceipts: `SELECT * FROM receipts ORDER BY at, id`,

  saveTurn: `
    INSERT INTO turns (turn_id, session_key, channel, trace_id, version, waiting_approval_id, updated_at, body)
    VALUES ($turn_id, $session_key, $channel, $trace_id, $version, $waiting_approval_id, $updated_at, $body)
    ON CONFLICT (turn_id) DO UPDATE SET version = excluded.version, waiting_approval_id = excluded.waiting_approval_id,
      updated_at = excluded.updated_at, body = excluded.body`,
  getTurn: `SELECT * FROM turns WHERE turn_id = $turn_id`,
  listTurns: `SELECT * FROM turns ORDER BY updated_at, turn_id`,
  listTurnsOf: `SELECT * FROM turns WHERE session_key = $session_key ORDER BY updated_at, turn_id`,
  deleteTurn: `DELETE FROM turns WHERE turn_id = $turn_id`,

  getValue: `SELECT value FROM kv WHERE key = $key`,
  getTwoValues: `SELECT key, value FROM kv WHERE key IN ($a, $b)`,
  listValues: `SELECT key, value FROM kv WHERE substr(key, 1, length($prefix)) = $prefix ORDER BY key`,
  deleteValue: `DELETE FROM kv WHERE key = $key`,
  setValue: `
    INSERT INTO kv (key, value) VALUES ($key, $value)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
} as const;

/** The store's prepared statements, by name. */
export type Statements = { readonly [K in keyof typeof SQL]: StatementSync };

/** Prepares every statement against a migrated database. */
export function prepareStatements(db: DatabaseSync): Statements {
  const prepared = {} as Record<keyof typeof SQL, StatementSync>;
  for (const name of Object.keys(SQL) as (keyof typeof SQL)[]) prepared[name] = db.prepare(SQL[name]);
  return prepared;
}
