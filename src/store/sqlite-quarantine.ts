// The SQLite store's quarantine: writes on the main connection (the one writer), in transactions of
// their own; its pages and its count on whichever connection runs the heavy reads.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { QuarantinedDeliveryRecord } from '../domain/index.ts';
import {
  QUARANTINE_COLUMNS,
  QUARANTINE_INSERT_COLUMNS,
  quarantineId,
  quarantinePage,
  quarantineParams,
  storableText,
  toQuarantineRecord,
  type QuarantineRow,
} from './quarantine-row.ts';
import { inTransaction } from './sqlite-connection.ts';
import type { QuarantineQuery, QuarantineStore } from './types.ts';

const UNREVIEWED = 'SELECT count(*) AS n FROM collection_quarantine WHERE reviewed_at IS NULL';

/** The quarantine's reads on one connection: a page, and how many await review. */
export function createQuarantineReads(database: DatabaseSync) {
  // One statement per combination of filters, each prepared once, so each takes its own index.
  const pages = new Map<string, StatementSync>();
  let unreviewed: StatementSync | undefined;
  return {
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
  const waiting = database.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM collection_quarantine WHERE reviewed_at IS NULL LIMIT ?)');
  const review = database.prepare(
    `UPDATE collection_quarantine SET reviewed_at = ?, review_note = ?, reviewed_by = ? WHERE id = ? AND reviewed_at IS NULL RETURNING ${QUARANTINE_COLUMNS}`,
  );
  const byId = database.prepare(`SELECT ${QUARANTINE_COLUMNS} FROM collection_quarantine WHERE id = ?`);
  const row = (statement: StatementSync, ...values: SQLInputValue[]) => statement.get(...values) as QuarantineRow | undefined;

  return {
    async keep(deliveries, maxUnreviewed) {
      return inTransaction(
        database,
        () => {
          const room = Math.max(0, maxUnreviewed - Number(waiting.get(maxUnreviewed)?.n));
          const kept = deliveries.slice(0, room);
          for (const delivery of kept) insert.run(...(quarantineParams(delivery) as SQLInputValue[]));
          return kept.length;
        },
        // Nothing kept: nothing to commit, and no fsync.
        (kept) => kept > 0,
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
  };
}
