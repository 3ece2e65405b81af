// The PostgreSQL store's confirmation queue, on connections of its own (so it never takes one the
// webhook's writes need). Leases are on the database's clock, which every replica shares.
import type { ConfirmationBackend } from './core.ts';
import { differencesColumn, selectList, type NotificationRow } from './notification-row.ts';
import type { RunQuery } from './postgres-deadline.ts';

const QUERIES = {
  // The oldest due first, through the index of PENDING notifications. SKIP LOCKED: rows another
  // replica is claiming at this moment are left to it, so two claims never take one row; once
  // claimed, a row is not due again until its lease ends.
  claim: `UPDATE collection_notifications
    SET confirmation_due_at = now() + $2::bigint * interval '1 millisecond', confirmation_attempts = confirmation_attempts + 1
    WHERE seq IN (
      SELECT seq FROM collection_notifications
      WHERE confirmation_status = 'PENDING' AND confirmation_due_at <= now()
      ORDER BY txid, seq LIMIT $1
      FOR UPDATE SKIP LOCKED)
    RETURNING ${selectList('txid')}`,
  // A turn's outcomes as one jsonb parameter, in settlementId order (rows locked in one order on every replica).
  record: `UPDATE collection_notifications AS c
    SET confirmation_status = o.status, confirmation_checked_at = o.checked_at,
      confirmation_differences = o.differences, acknowledged_by_bank = o.acknowledged
    FROM jsonb_to_recordset($1::jsonb) AS o(settlement_id text, status text, checked_at text, differences text, acknowledged boolean)
    WHERE c.settlement_id = o.settlement_id COLLATE "C" AND c.confirmation_status = 'PENDING'
    RETURNING c.settlement_id`,
  defer: `UPDATE collection_notifications SET confirmation_due_at = now() + $2::bigint * interval '1 millisecond'
    WHERE settlement_id = ANY($1::text[]) AND confirmation_status = 'PENDING'`,
  countPending: "SELECT count(*) AS n FROM collection_notifications WHERE confirmation_status = 'PENDING'",
  oldestPending: "SELECT received_at FROM collection_notifications WHERE confirmation_status = 'PENDING' ORDER BY txid, seq LIMIT 1",
} as const;

/**
 * The queue's statements, each named (every connection parses and plans it once): outcomes and
 * counts on `outcomes`, claims and deferrals on `leases` (connections that commit without waiting
 * for the WAL flush: a lease lost in a crash of the database only makes a row due sooner).
 */
export function createPostgresConfirmations(runners: { outcomes: RunQuery; leases: RunQuery }): ConfirmationBackend {
  const ON_LEASES: ReadonlySet<keyof typeof QUERIES> = new Set(['claim', 'defer']);
  const query = async <Row extends Record<string, unknown>>(name: keyof typeof QUERIES, values: unknown[] = []) =>
    (await (ON_LEASES.has(name) ? runners.leases : runners.outcomes)<Row>({ name: `confirmations-${name}`, text: QUERIES[name], values }))
      .rows;
  return {
    claim: ({ limit, leaseMs }) => query<NotificationRow & Record<string, unknown>>('claim', [limit, leaseMs]),
    async record(outcomes) {
      const ordered = outcomes.toSorted((a, b) => (a.settlementId < b.settlementId ? -1 : a.settlementId > b.settlementId ? 1 : 0));
      const rows = ordered.map((outcome) => ({
        settlement_id: outcome.settlementId,
        status: outcome.status,
        checked_at: outcome.checkedAt,
        differences: differencesColumn(outcome),
        acknowledged: outcome.acknowledgedByBank,
      }));
      const recorded = new Set((await query<{ settlement_id: string }>('record', [JSON.stringify(rows)])).map((row) => row.settlement_id));
      return outcomes.map((outcome) => recorded.has(outcome.settlementId));
    },
    async defer(settlementIds, delayMs) {
      await query('defer', [settlementIds, delayMs]);
    },
    async countPending() {
      const [row] = await query<{ n: string }>('countPending');
      return Number(row?.n ?? 0);
    },
    async oldestPending() {
      const [row] = await query<{ received_at: string }>('oldestPending');
      return row?.received_at ?? null;
    },
  };
}
