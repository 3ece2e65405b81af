// The SQLite store's reads, on whichever connection runs them: the main one for the log's small
// reads, the reader thread's own read-only one for everything a GraphQL caller can make heavy.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { LogPosition } from '../domain/index.ts';
import type { AccountFilter, AfterPage, NewestFirstPage } from './core.ts';
import { selectList, type NotificationRow } from './notification-row.ts';
import { createQuarantineReads } from './sqlite-quarantine.ts';
import { accountParameter, daySums, prepareSummaryStatements, prepareVariants, rangedPage, statusPage } from './sqlite-summary.ts';
import type { DayWindow, DaySums } from './summary.ts';

// Every row here is at txid 0: a position with a larger txid (from another store) is past them all.
const seqBefore = (position: LogPosition | undefined) =>
  position === undefined || position.txid > 0 ? Number.MAX_SAFE_INTEGER : position.seq;
export const seqAfter = (position: LogPosition) => (position.txid > 0 ? Number.MAX_SAFE_INTEGER : position.seq);
export const seqThrough = (position: LogPosition | undefined) =>
  position === undefined || position.txid > 0 ? Number.MAX_SAFE_INTEGER : position.seq;
// The log reads' bounds, (after, through].
const LOG_RANGE = 'seq > ? AND seq <= ?';
export const atSeq = (seq: number): LogPosition => ({ txid: 0, seq });

const rows = (statement: StatementSync, ...params: SQLInputValue[]) => statement.all(...params) as unknown as NotificationRow[];

/** The store's reads on one connection, each synchronous; a connection's statements never interleave. */
export function createSqliteReads(database: DatabaseSync) {
  const from = `SELECT ${selectList('0')} FROM collection_notifications`;
  const statements = {
    // One statement for any number of ids: they travel as one JSON array.
    getMany: database.prepare(`${from} WHERE settlement_id IN (SELECT value FROM json_each(?))`),
    // The first in the log: seq order is commit order here.
    bySession: database.prepare(`${from} WHERE session_id = ? ORDER BY seq LIMIT 1`),
    // Each for every account, one or several (prepareVariants).
    newest: prepareVariants(database, (account) => `${from} WHERE ${account}seq < ? ORDER BY seq DESC LIMIT ?`),
    after: prepareVariants(database, (account) => `${from} WHERE ${account}${LOG_RANGE} ORDER BY seq LIMIT ?`),
    newestSeq: database.prepare('SELECT seq FROM collection_notifications ORDER BY seq DESC LIMIT 1'),
    summary: prepareSummaryStatements(database),
  };
  return {
    ...createQuarantineReads(database),
    rowsOf: (settlementIds: readonly string[]) => rows(statements.getMany, JSON.stringify(settlementIds)),
    rowOfSession: (sessionId: string): NotificationRow | undefined => rows(statements.bySession, sessionId)[0],
    newestFirst({ accountNumber, accounts, before, limit, from: start, to, statuses }: NewestFirstPage): NotificationRow[] {
      const page = { accountNumber, accounts, from: start, to, statuses, before: seqBefore(before), limit };
      if (statuses !== undefined && to === undefined) {
        const [statement, params] = statusPage(statements.summary, { ...page, statuses });
        return statement.all(params) as unknown as NotificationRow[];
      }
      if (start !== undefined || to !== undefined) {
        const [statement, params] = rangedPage(statements.summary, page);
        return rows(statement, ...params);
      }
      const [kind, account] = accountParameter({ accountNumber, accounts });
      return rows(statements.newest[kind], ...account, page.before, limit);
    },
    after({ accountNumber, accounts, after, through, limit }: AfterPage): NotificationRow[] {
      const [kind, account] = accountParameter({ accountNumber, accounts });
      return rows(statements.after[kind], ...account, seqAfter(after), seqThrough(through), limit);
    },
    settledHead(): LogPosition | undefined {
      const row = statements.newestSeq.get();
      return row && atSeq(Number(row.seq));
    },
    daySums: (days: readonly DayWindow[], filter: AccountFilter, confirmed: boolean): DaySums[] =>
      daySums(database, statements.summary, days, filter, confirmed),
  };
}

export type SqliteReads = ReturnType<typeof createSqliteReads>;

/** The reads a GraphQL caller (or a scrape) can make as heavy as it likes: the reader thread runs them. */
export const HEAVY_READS = [
  'rowsOf',
  'rowOfSession',
  'newestFirst',
  'daySums',
  'quarantinePage',
  'quarantineUnreviewed',
  'quarantineWithIds',
] as const;
export type HeavyRead = (typeof HEAVY_READS)[number];
