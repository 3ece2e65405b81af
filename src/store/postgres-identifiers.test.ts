/**
 * settlementId and accountNumber are kept in byte order (collation "C", migration 005), so their
 * indexes compare bytes rather than go through the locale. The store's lookups by them must still
 * be served by those indexes, and a store filled before the migration must find every row after it.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { newNotification } from '../../test/helpers/notifications.ts';
import { databaseUrl, isolatedPostgresUrl, postgresSchemaUpTo, postgresSession, storeAt } from '../../test/helpers/stores.ts';
import { INSERT_COLUMNS, toInsertParams } from './notification-row.ts';
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
    expect(await planOf(client, QUERIES.newestOfAccount, ['0123456789', AFTER_EVERY_TXID, 0, 20])).toContain(
      'collection_notifications_account_log',
    );
    // The insert's check that a row is not stored yet probes the unique index, one row at a time.
    const insertPlan = await planOf(client, QUERIES.insert, [JSON.stringify([toInsertParams(newNotification())])]);
    expect(insertPlan).toContain('collection_notifications_settlement_id_key');
    expect(insertPlan).not.toContain('Seq Scan');
  });

  it('finds every notification stored before the migration, and refuses a second delivery of one', async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    const client = await postgresSession(url);
    // The schema as the release before this migration left it, holding notifications.
    await postgresSchemaUpTo(client, 4);
    const before = Array.from({ length: 5 }, (_, i) => newNotification({ accountNumber: i % 2 === 0 ? '1111111111' : '2222222222' }));
    for (const notification of before) {
      await client.query(
        `INSERT INTO collection_notifications (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
        toInsertParams(notification),
      );
    }

    const store = await storeAt(url);
    const found = await store.getMany(before.map((notification) => notification.settlementId));
    expect(found.map((record) => record?.settlementId)).toEqual(before.map((notification) => notification.settlementId));
    const page = await store.listNewestFirst({ accountNumber: '1111111111', limit: 10 });
    expect(page.map((record) => record.settlementId)).toEqual([before[4]!, before[2]!, before[0]!].map((notification) => notification.settlementId));
    expect(await store.insert(before[1]!)).toEqual({ status: 'duplicate' });
  });
});
