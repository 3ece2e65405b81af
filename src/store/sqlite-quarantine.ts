// The SQLite store's quarantine: writes on the main connection (the one writer), in transactions of
// their own; its pages and its count on whichever connection runs the heavy reads.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { QuarantinedDeliveryRecord } from '../domain/index.ts';
import {
  QUARANTINE_COLUMNS,
  QUARANTINE_INSERT_COLUMNS,
  quarantineId,
  quarantinePage,
  quarantineWithIds,
  quarantineParams,
  storableText,
  toQuarantineRecord,
  type QuarantineRow,
} from './quarantine-row.ts';
import { inTransaction } from './sqlite-connection.ts';
import type { KeepOutcome, QuarantineQuery, QuarantineStore, TransferIdsQuery } from './types.ts';

const UNREVIEWED = 'SELECT unreviewed AS n FROM collection_quarantine_backlog';

/** The quarantine's reads on one connection: a page, how many await review, and those of a transfer's ids. */
export function createQuarantineReads(database: DatabaseSync) {
  // One statement per combination of filters, each prepared once, so each takes its own index.
  const pages = new Map<string, StatementSync>();
  let unreviewed: StatementSync | undefined;
  let withIds: StatementSync | undefined;
  return {
    quarantineWithIds(query: TransferIdsQuery): QuarantinedDeliveryRecord[] {
      // The ids travel as JSON arrays: one statement for any number of them.
      withIds ??= database.prepare(
        quarantineWithIds(
          (n) => `?${n}`,
          (n) => `(SELECT value FROM json_each(?${n}))`,
        ),
      );
      const values = [JSON.stringify(query.settlementIds), JSON.stringify(query.sessionIds), query.limit];
      return (withIds.all(...values) as unknown as QuarantineRow[]).map(toQuarantineRecord);
    },
    quarantinePage(query: QuarantineQuery): QuarantinedDeliveryRecord[] {
      const { text, values } = quarantinePage(query, () => '?');
      let statement = pages.get(text);
      if (statement === undefined) pages.set(text, (statement = database.prepare(text)));
      return (statement.all(...values) as unknown as QuarantineRow[]).map(toQuarantineRecord);
    },
    quarantineUnreviewed(): number {
      unreviewed ??= database.prepare(UNREVIEWED);
      return Number(unreviewed.get()?.n);
    },
  };
}

type Reads = ReturnType<typeof createQuarantineReads>;
/** The quarantine's reads as the store makes them: on the reader thread when there is one. */
export type QuarantineReads = { [K in keyof Reads]: (...args: Parameters<Reads[K]>) => Promise<ReturnType<Reads[K]>> };

/**
 * The quarantine on `database`: kept and reviewed on it, read through `reads` (the reader thread, or
 * this connection). One writer at a time, so the bound is counted and kept in one transaction.
 */
export function createSqliteQuarantine(database: DatabaseSync, reads: QuarantineReads): QuarantineStore {
  const insert = database.prepare(
    `INSERT INTO collection_quarantine (${QUARANTINE_INSERT_COLUMNS.join(', ')}) VALUES (${QUARANTINE_INSERT_COLUMNS.map(() => '?').join(', ')})`,
  );
  const backlog = database.prepare('SELECT unreviewed, unreviewed_bytes FROM collection_quarantine_backlog');
  const review = database.prepare(
    `UPDATE collection_quarantine SET reviewed_at = ?, review_note = ?, reviewed_by = ? WHERE id = ? AND reviewed_at IS NULL RETURNING ${QUARANTINE_COLUMNS}`,
  );
  const byId = database.prepare(`SELECT ${QUARANTINE_COLUMNS} FROM collection_quarantine WHERE id = ?`);
  const row = (statement: StatementSync, ...values: SQLInputValue[]) => statement.get(...values) as QuarantineRow | undefined;

  return {
    async keep(deliveries, { maxRows, maxBytes }) {
      return inTransaction(
        database,
        () => {
          // Read inside the write transaction: no other writer, in this process or another, can change it meanwhile.
          const held = backlog.get() as { unreviewed: number; unreviewed_bytes: number };
          let [rowsLeft, bytesLeft] = [maxRows - held.unreviewed, maxBytes - held.unreviewed_bytes];
          return deliveries.map((delivery): KeepOutcome => {
            if (rowsLeft <= 0) return 'over_rows';
            if (delivery.rawBody.byteLength > bytesLeft) return 'over_bytes';
            insert.run(...(quarantineParams(delivery) as SQLInputValue[]));
            rowsLeft -= 1;
            bytesLeft -= delivery.rawBody.byteLength;
            return 'kept';
          });
        },
        // Nothing kept: nothing to commit, and no fsync.
        (outcomes) => outcomes.includes('kept'),
      );
    },
    list: (query) => reads.quarantinePage(query),
    async review({ id, note, reviewedBy, reviewedAt }) {
      const number = quarantineId(id);
      if (number === undefined) return { status: 'unknown' };
      const reviewed = row(review, reviewedAt, storableText(note), storableText(reviewedBy), number);
      if (reviewed) return { status: 'reviewed', delivery: toQuarantineRecord(reviewed) };
      const found = row(byId, number);
      return found ? { status: 'already-reviewed', delivery: toQuarantineRecord(found) } : { status: 'unknown' };
    },
    countUnreviewed: () => reads.quarantineUnreviewed(),
    withTransferIds: (query) => reads.quarantineWithIds(query),
  };
}
