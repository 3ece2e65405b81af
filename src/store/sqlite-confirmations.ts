// The SQLite store's confirmation queue, on the main connection: the one the webhook writes on, so
// each call is one transaction whatever it holds, and one that changes nothing is rolled back without
// touching the disk. Outcomes are committed durably (an fsync, as a 00 is); claims and deferrals only
// move a due time, which need not survive a power cut (a lost lease makes a row due sooner, on a
// replica that is gone anyway), so they wait for no fsync of their own.
import type { DatabaseSync } from 'node:sqlite';
import type { ConfirmationBackend } from './core.ts';
import { differencesColumn, selectList, type NotificationRow } from './notification-row.ts';
import { inLightTransaction, inTransaction } from './sqlite-connection.ts';

/** The queue's statements; due times are epoch milliseconds of this process's clock (one process writes a SQLite file at a time). */
export function createSqliteConfirmations(database: DatabaseSync): ConfirmationBackend {
  const statements = {
    // The oldest due first, found through the index of PENDING notifications.
    claim: database.prepare(`UPDATE collection_notifications
      SET confirmation_due_ms = ?, confirmation_attempts = confirmation_attempts + 1
      WHERE seq IN (SELECT seq FROM collection_notifications WHERE confirmation_status = 'PENDING' AND confirmation_due_ms <= ? ORDER BY seq LIMIT ?)
      RETURNING ${selectList('0')}`),
    record: database.prepare(`UPDATE collection_notifications
      SET confirmation_status = ?, confirmation_checked_at = ?, confirmation_differences = ?, acknowledged_by_bank = ?
      WHERE settlement_id = ? AND confirmation_status = 'PENDING'`),
    defer: database.prepare(`UPDATE collection_notifications SET confirmation_due_ms = ?
      WHERE settlement_id IN (SELECT value FROM json_each(?)) AND confirmation_status = 'PENDING'`),
    countPending: database.prepare("SELECT count(*) AS n FROM collection_notifications WHERE confirmation_status = 'PENDING'"),
    oldestPending: database.prepare("SELECT received_at FROM collection_notifications WHERE confirmation_status = 'PENDING' ORDER BY seq LIMIT 1"),
  };
  return {
    async claim({ limit, leaseMs }) {
      const now = Date.now();
      return inLightTransaction(
        database,
        () => statements.claim.all(now + leaseMs, now, limit) as unknown as NotificationRow[],
        (claimed) => claimed.length > 0,
      );
    },
    async record(outcomes) {
      return inTransaction(
        database,
        () =>
          outcomes.map((outcome) => {
            const acknowledged = outcome.acknowledgedByBank === null ? null : Number(outcome.acknowledgedByBank);
            const { changes } = statements.record.run(outcome.status, outcome.checkedAt, differencesColumn(outcome), acknowledged, outcome.settlementId);
            return changes === 1;
          }),
        (recorded) => recorded.some(Boolean),
      );
    },
    async defer(settlementIds, delayMs) {
      inLightTransaction(database, () => statements.defer.run(Date.now() + delayMs, JSON.stringify(settlementIds)).changes, (changed) => changed > 0);
    },
    async countPending() {
      return Number(statements.countPending.get()?.n);
    },
    async oldestPending() {
      const row = statements.oldestPending.get();
      return row === undefined ? null : String(row.received_at);
    },
  };
}
