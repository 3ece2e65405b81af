// The PostgreSQL store's confirmation queue, on connections of its own (so it never takes one the
// webhook's writes need). Leases are on the database's clock, which every replica shares.
import type { ConfirmationBackend } from './core.ts';
import { differencesColumn, selectList, type NotificationRow } from './notification-row.ts';
import type { RunQuery } from './postgres-deadline.ts';

// The oldest due first, through the index of PENDING notifications; a probe only among those no ask
// has failed about. SKIP LOCKED: rows another replica is claiming at this moment are left to it, so
// two claims never take one row; once claimed, a row is not due again until its lease ends.
const claim = (probe: string) => `UPDATE collection_notifications
    SET confirmation_due_at = now() + $2::bigint * interval '1 millisecond'
    WHERE seq IN (
      SELECT seq FROM collection_notifications
      WHERE confirmation_status = 'PENDING' AND confirmation_due_at <= now()${probe}
      ORDER BY txid, seq LIMIT $1
      FOR UPDATE SKIP LOCKED)
    RETURNING ${selectList('txid')}`;

// A turn's answers as one jsonb parameter, in settlementId order (rows locked in one order on every
// replica); each an ask, and its decision (the log of confirmations' trigger takes a CONFIRMED one).
const record = (over: string) => `UPDATE collection_notifications AS c
    SET confirmation_status = o.status, confirmation_checked_at = o.checked_at,
      confirmation_differences = o.differences, acknowledged_by_bank = o.acknowledged,
      confirmation_attempts = c.confirmation_attempts + 1, confirmation_failures = 0,
      confirmation_decided_by = NULL, confirmation_reason = NULL
    FROM jsonb_to_recordset($1::jsonb) AS o(settlement_id text, status text, checked_at text, differences text, acknowledged boolean)
    WHERE c.settlement_id = o.settlement_id COLLATE "C" AND ${over}
    RETURNING c.settlement_id`;

const QUERIES = {
  claim: claim(''),
  probe: claim(' AND confirmation_failures = 0'),
  record: record("c.confirmation_status = 'PENDING'"),
  recordOverDecided: record("c.confirmation_status <> 'CONFIRMED'"),
  // Asks that decided nothing: a failure counts towards its backoff; a not-found answer keeps the
  // first one's time (a reopened notification starts again from this one).
  retry: `UPDATE collection_notifications AS c
    SET confirmation_status = 'PENDING', confirmation_due_at = now() + r.delay_ms * interval '1 millisecond',
      confirmation_attempts = c.confirmation_attempts + 1,
      confirmation_failures = CASE WHEN r.kind = 'failed' THEN c.confirmation_failures + 1 ELSE 0 END,
      confirmation_not_found_at = CASE
        WHEN r.kind <> 'not-found' THEN c.confirmation_not_found_at
        WHEN c.confirmation_status = 'PENDING' THEN coalesce(c.confirmation_not_found_at, r.at)
        ELSE r.at END
    FROM jsonb_to_recordset($1::jsonb) AS r(settlement_id text, delay_ms bigint, kind text, at text, reopen boolean)
    WHERE c.settlement_id = r.settlement_id COLLATE "C"
      AND (c.confirmation_status = 'PENDING' OR (r.reopen AND c.confirmation_status IN ('MISMATCHED', 'UNCHECKED')))
    RETURNING c.settlement_id`,
  defer: `UPDATE collection_notifications SET confirmation_due_at = now() + $2::bigint * interval '1 millisecond'
    WHERE settlement_id = ANY($1::text[]) AND confirmation_status = 'PENDING'`,
  // One statement: the decision where the status allows it, else the status it found (none: unknown).
  decide: `WITH decided AS (
      UPDATE collection_notifications
      SET confirmation_status = $2, confirmation_checked_at = $3, confirmation_differences = '[]', acknowledged_by_bank = NULL,
        confirmation_decided_by = $4, confirmation_reason = $5
      WHERE settlement_id = $1 AND confirmation_status = 'PENDING'
      RETURNING ${selectList('txid')})
    SELECT true AS decided, * FROM decided
    UNION ALL
    SELECT false AS decided, ${selectList('txid')} FROM collection_notifications
    WHERE settlement_id = $1 AND NOT EXISTS (SELECT 1 FROM decided)`,
  countPending: "SELECT count(*) AS n FROM collection_notifications WHERE confirmation_status = 'PENDING'",
  oldestPending: "SELECT received_at FROM collection_notifications WHERE confirmation_status = 'PENDING' ORDER BY txid, seq LIMIT 1",
} as const;

/**
 * The queue's statements, each named (every connection parses and plans it once): outcomes and
 * counts on `outcomes`, claims and deferrals on `leases` (connections that commit without waiting
 * for the WAL flush: a lease lost in a crash of the database only makes a row due sooner).
 */
export function createPostgresConfirmations(runners: { outcomes: RunQuery; leases: RunQuery }): ConfirmationBackend {
  const ON_LEASES: ReadonlySet<keyof typeof QUERIES> = new Set(['claim', 'probe', 'defer']);
  const query = async <Row extends Record<string, unknown>>(name: keyof typeof QUERIES, values: unknown[] = []) =>
    (await (ON_LEASES.has(name) ? runners.leases : runners.outcomes)<Row>({ name: `confirmations-${name}`, text: QUERIES[name], values }))
      .rows;
  return {
    claim: ({ limit, leaseMs, probe }) => query<NotificationRow & Record<string, unknown>>(probe ? 'probe' : 'claim', [limit, leaseMs]),
    async record(outcomes, overDecided) {
      const ordered = outcomes.toSorted((a, b) => (a.settlementId < b.settlementId ? -1 : a.settlementId > b.settlementId ? 1 : 0));
      const rows = ordered.map((outcome) => ({
        settlement_id: outcome.settlementId,
        status: outcome.status,
        checked_at: outcome.checkedAt,
        differences: differencesColumn(outcome),
        acknowledged: outcome.acknowledgedByBank,
      }));
      const name = overDecided ? 'recordOverDecided' : 'record';
      const recorded = new Set((await query<{ settlement_id: string }>(name, [JSON.stringify(rows)])).map((row) => row.settlement_id));
      return outcomes.map((outcome) => recorded.has(outcome.settlementId));
    },
    async retry(retries) {
      const rows = retries
        .map((retry) => ({
          settlement_id: retry.settlementId,
          delay_ms: retry.delayMs,
          kind: retry.kind,
          at: retry.at,
          reopen: retry.reopen === true,
        }))
        .toSorted((a, b) => (a.settlement_id < b.settlement_id ? -1 : a.settlement_id > b.settlement_id ? 1 : 0));
      const recorded = new Set((await query<{ settlement_id: string }>('retry', [JSON.stringify(rows)])).map((row) => row.settlement_id));
      return retries.map((retry) => recorded.has(retry.settlementId));
    },
    async decide({ settlementId, status, decidedBy, reason, decidedAt }) {
      const [row] = await query<NotificationRow & { decided: boolean } & Record<string, unknown>>('decide', [
        settlementId,
        status,
        decidedAt,
        decidedBy,
        reason,
      ]);
      if (row === undefined) return { current: undefined };
      return row.decided ? { decided: row } : { current: row.confirmation_status };
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
