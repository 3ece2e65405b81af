/**
 * The bench's insert-cost mode: each writer stores every row it is given (a writer that stores fewer
 * throws, failing the run), every figure is read, and the floor is the row the others are held to.
 * What the figures are is the bench's business, not a test's.
 */
import { describe, expect, it } from 'vitest';
import { measureInsertCost, insertCostTable } from '../scripts/bench/insert-cost.ts';
import { tempDirectory } from './helpers/stores.ts';
import { serviceUrl } from './helpers/services.ts';

const databaseUrl = serviceUrl('DATABASE_URL');

const WRITERS = [
  'ours: every column, every index',
  'ours without the time-range and summary indexes',
  "ours with settlementId's index alone",
  "the floor's row (settlement_id, session_id, body)",
];

describe('npm run bench -- --insert-cost', () => {
  it('writes each store through our store and the floor\'s table, and holds each against the floor', async () => {
    const rows = await measureInsertCost({ rounds: 1, rowsPerRound: 60, parentDir: tempDirectory(), sqlite: true, databaseUrl: undefined });
    expect(rows.map((row) => [row.store, row.writer])).toEqual(WRITERS.map((writer) => ['SQLite', writer]));
    // settlementId's, and ours' of each account's pages, of time ranges and summaries, and of amounts beyond kobo.
    expect(rows.map((row) => row.indexes)).toEqual([5, 3, 1, 1]);
    for (const row of rows) {
      expect(row.processUs).toBeGreaterThan(0);
      // SQLite writes in this process: there is no server's CPU to read.
      expect(row.databaseUs).toBeUndefined();
    }
    expect(rows.at(-1)!.ratio).toBe(1);
    expect(insertCostTable(rows)).toMatch(/SQLite .* ours: every column, every index/);
  });

  it.runIf(databaseUrl !== undefined)('on PostgreSQL, counts the database server\'s CPU per row too, each writer by its own sessions', async () => {
    const rows = await measureInsertCost({ rounds: 1, rowsPerRound: 60, parentDir: tempDirectory(), sqlite: false, databaseUrl });
    expect(rows.map((row) => [row.store, row.writer])).toEqual(WRITERS.map((writer) => ['PostgreSQL', writer]));
    // The primary key's and settlementId's, and ours' of the log, each account's log, and time ranges and summaries.
    expect(rows.map((row) => row.indexes)).toEqual([6, 4, 2, 2]);
    for (const row of rows) {
      expect(row.processUs).toBeGreaterThan(0);
      // The server runs on this machine in CI: its backends' /proc entries can be read.
      expect(row.databaseUs).toBeGreaterThan(0);
    }
    expect(rows.at(-1)!.ratio).toBe(1);
  });
});
