/**
 * settlementId and accountNumber are kept in byte order (collation "C"), so their indexes compare
 * bytes rather than go through the locale. The store's lookups by them must still be served by
 * those indexes.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { newNotification } from '../../test/helpers/notifications.ts';
import { databaseUrl, isolatedPostgresUrl, postgresSession, storeAt } from '../../test/helpers/stores.ts';
import { toInsertParams } from './notification-row.ts';
import { AFTER_EVERY_TXID, QUERIES } from './postgres-queries.ts';

/** The plan PostgreSQL makes for `sql` with `values`, as JSON text (sequential scans off: an index that can serve it, does). */
async function planOf(client: pg.Client, sql: string, values: unknown[]): Promise<string> {
  await client.query('SET enable_seqscan = off');
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, values);
  return JSON.stringify(rows);
}

describe.runIf(databaseUrl !== undefined)('PostgreSQL identifiers in byte order', () => {
  it('collates settlement_id and account_number as "C", and lookups by them still use their indexes', async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    await storeAt(url);
    const client = await postgresSession(url);

    const { rows } = await client.query<{ attname: string; collname: string }>(
      `SELECT a.attname, c.collname FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
       WHERE a.attrelid = 'collection_notifications'::regclass AND a.attname IN ('settlement_id', 'account_number')
       ORDER BY a.attname`,
    );
    expect(rows).toEqual([
      { attname: 'account_number', collname: 'C' },
      { attname: 'settlement_id', collname: 'C' },
    ]);

    // Parameters come with the default collation; the column's "C" decides, so the index serves.
    expect(await planOf(client, QUERIES.getMany, [['x']])).toContain('collection_notifications_settlement_id_key');
    expect(await planOf(client, QUERIES.newestOfAccount, [AFTER_EVERY_TXID, 0, 20, '0123456789'])).toContain(
      'collection_notifications_account_log',
    );
    // The insert's check that a row is not stored yet probes the unique index, one row at a time.
    const insertPlan = await planOf(client, QUERIES.insert, [JSON.stringify([toInsertParams(newNotification())])]);
    expect(insertPlan).toContain('collection_notifications_settlement_id_key');
    expect(insertPlan).not.toContain('Seq Scan');
  });
});
