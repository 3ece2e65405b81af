// The SQLite store's log of confirmations (collection_confirmations, migration 005): read on the main
// connection, as the notifications' log is, since its reads are small and follow the commits. One
// writer at a time draws seq inside its transaction, so seq order is commit order and everything
// committed is settled.
import type { DatabaseSync } from 'node:sqlite';
import type { AfterPage, ConfirmationLogBackend, ConfirmedRow } from './core.ts';
import { selectList } from './notification-row.ts';
import { accountParameter, prepareVariants } from './sqlite-summary.ts';
import { atSeq, seqAfter, seqThrough } from './sqlite-reads.ts';

/** The log's statements on `database`. */
export function createSqliteConfirmationLog(database: DatabaseSync): ConfirmationLogBackend {
  // The page's positions from the log (and its per-account index) first, then only their rows.
  const after = prepareVariants(
    database,
    (account) => `SELECT 0 AS confirmed_txid, c.confirmed_seq, ${selectList('0')}
      FROM (SELECT seq AS confirmed_seq, settlement_id AS confirmed_id FROM collection_confirmations
        WHERE ${account}seq > ? AND seq <= ? ORDER BY seq LIMIT ?) AS c
      JOIN collection_notifications ON settlement_id = c.confirmed_id
      ORDER BY c.confirmed_seq`,
  );
  const head = database.prepare('SELECT seq FROM collection_confirmations ORDER BY seq DESC LIMIT 1');
  const settledHead = async () => {
    const row = head.get();
    return row && atSeq(Number(row.seq));
  };
  return {
    async after({ accountNumber, accounts, after: from, through, limit }: AfterPage) {
      const [kind, account] = accountParameter({ accountNumber, accounts });
      return after[kind].all(...account, seqAfter(from), seqThrough(through), limit) as unknown as ConfirmedRow[];
    },
    settledHead,
    committedHead: settledHead,
  };
}
