import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { AWKWARD_AMOUNTS, BEYOND_KOBO_AMOUNTS, referenceTotals } from '../../test/helpers/amounts.ts';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { databaseUrl, isolatedPostgresUrl, postgresSchemaUpTo, postgresSession, queryFile, silent, tempSqlitePath } from '../../test/helpers/stores.ts';
import type { NewCollectionNotification } from '../domain/index.ts';
import { createNotificationStore } from './index.ts';
import { INSERT_COLUMNS, toInsertParams } from './notification-row.ts';

// A store filled by the release before summaries (migration 001 only) is opened by this one: the
// migration must fill the new columns for every row already stored, exactly, and lose nothing.

const MIGRATION = (kind: string, file: string) => readFileSync(join(import.meta.dirname, 'migrations', kind, file), 'utf8');
const FIRST_MIGRATION = (kind: string) => MIGRATION(kind, '001_collection_notifications.sql');
const INSERT_OLD = (placeholder: (index: number) => string) =>
  `INSERT INTO collection_notifications (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map((_, i) => placeholder(i)).join(', ')})`;

/** Notifications of every awkward kind, over two WAT days, some with an unreadable bank time. */
function oldNotifications(): NewCollectionNotification[] {
  const amounts = [...AWKWARD_AMOUNTS, ...BEYOND_KOBO_AMOUNTS];
  return Array.from({ length: 60 }, (_, i) =>
    newNotification({
      accountNumber: i % 4 === 0 ? '2222222222' : '1111111111',
      transactionAmount: amounts[i % amounts.length]!,
      settledAmount: i % 5 === 0 ? null : amounts[(i + 3) % amounts.length]!,
      feeAmount: i % 2 === 0 ? '10.00' : null,
      vatAmount: '0.75',
      transactionTime: i % 6 === 0 ? null : `2024-05-0${1 + (i % 2)}T00:${String(i % 60).padStart(2, '0')}:00.${String(i).padStart(3, '0')}+01:00`,
      receivedAt: `2024-05-01T23:${String(i % 60).padStart(2, '0')}:00.000Z`,
    }),
  );
}

const RANGE = { from: new Date('2024-05-01T00:00:00+01:00'), to: new Date('2024-05-03T00:00:00+01:00'), timezone: 'Africa/Lagos' };

/** What the summary of RANGE must be: days cut at midnight WAT by each notification's time. */
function expectedSummary(notifications: readonly NewCollectionNotification[], accountNumber?: string) {
  const counted = notifications.filter((n) => accountNumber === undefined || n.accountNumber === accountNumber);
  const dayOf = (n: NewCollectionNotification) => (n.transactionTime === null ? '2024-05-02' : n.transactionTime.slice(0, 10));
  return {
    ...referenceTotals(counted),
    days: ['2024-05-01', '2024-05-02'].map((date) => ({ date, ...referenceTotals(counted.filter((n) => dayOf(n) === date)) })),
  };
}

async function expectMigratedStore(url: string, stored: readonly NewCollectionNotification[]) {
  const store = await createNotificationStore(url, { logger: silent });
  onCleanup(() => store.close());
  // Nothing lost: every row reads back exactly as it was stored.
  const read = await store.getMany(stored.map((n) => n.settlementId));
  expect(read.map((record) => record && { ...record, position: null })).toEqual(stored.map((n) => ({ ...n, position: null })));
  for (const accountNumber of [undefined, '2222222222']) {
    expect(await store.summarize({ ...RANGE, accountNumber })).toMatchObject(expectedSummary(stored, accountNumber));
  }
  // New rows are summed beside the old ones.
  const added = newNotification({ transactionTime: '2024-05-01T12:00:00+01:00', transactionAmount: '0.20' });
  await store.insert(added);
  expect(await store.summarize(RANGE)).toMatchObject(referenceTotals([...stored, added]));
  return store;
}

describe('the summary migration on a store filled before it', () => {
  it('fills SQLite kobo columns exactly as the webhook insert does, and sums the old rows', async () => {
    const path = tempSqlitePath();
    const old = new DatabaseSync(path);
    old.exec(FIRST_MIGRATION('sqlite'));
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    old.prepare("INSERT INTO schema_migrations VALUES (1, 'collection_notifications', '2024-05-01T00:00:00Z')").run();
    const stored = oldNotifications();
    const insert = old.prepare(INSERT_OLD(() => '?'));
    for (const notification of stored) insert.run(...toInsertParams(notification));
    old.close();

    await expectMigratedStore(`sqlite:${path}`, stored);

    // The SQL that filled the old rows and the insert's own encoding agree, column by column.
    const freshPath = tempSqlitePath();
    const fresh = await createNotificationStore(`sqlite:${freshPath}`, { logger: silent });
    onCleanup(() => fresh.close());
    for (const notification of stored) await fresh.insert(notification);
    const columns = `SELECT settlement_id, event_ms, transaction_amount_kobo_hi, transaction_amount_kobo_lo, settled_amount_kobo_hi,
      settled_amount_kobo_lo, fee_amount_kobo_hi, fee_amount_kobo_lo, vat_amount_kobo_hi, vat_amount_kobo_lo, amounts_beyond_kobo
      FROM collection_notifications WHERE settlement_id IN (${stored.map((n) => `'${n.settlementId}'`).join(', ')}) ORDER BY settlement_id`;
    const migrated = queryFile(path, columns);
    expect(migrated).toHaveLength(stored.length);
    expect(migrated.filter((row) => row.amounts_beyond_kobo === 1).length).toBeGreaterThan(0);
    expect(migrated).toEqual(queryFile(freshPath, columns));
  });

  it.runIf(databaseUrl !== undefined)('fills the PostgreSQL numeric and event_time columns and sums the old rows', async () => {
    const url = await isolatedPostgresUrl(databaseUrl ?? '');
    const client = await postgresSession(url);
    await postgresSchemaUpTo(client, 1);
    const stored = oldNotifications();
    for (const notification of stored) await client.query(INSERT_OLD((i) => `$${i + 1}`), toInsertParams(notification));

    await expectMigratedStore(url, stored);
  });

  it.runIf(databaseUrl !== undefined)('keeps the PostgreSQL summary columns through migration 004, and an insert of an earlier release still fills them', async () => {
    // A store of the release with generated summary columns (migrations 001-003), filled.
    const url = await isolatedPostgresUrl(databaseUrl ?? '');
    const client = await postgresSession(url);
    await postgresSchemaUpTo(client, 3);
    // Two lots of the same amounts and times, under different settlementIds.
    const [stored, later] = [oldNotifications(), oldNotifications()];
    for (const notification of stored) await client.query(INSERT_OLD((i) => `$${i + 1}`), toInsertParams(notification));
    const columns = (notifications: readonly NewCollectionNotification[]) =>
      client
        .query(
          `SELECT event_time, transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric
           FROM collection_notifications WHERE settlement_id = ANY($1) ORDER BY array_position($1, settlement_id)`,
          [notifications.map((n) => n.settlementId)],
        )
        .then(({ rows }) => rows);
    const generated = await columns(stored);

    const store = await expectMigratedStore(url, stored);
    expect(await columns(stored)).toEqual(generated);
    // The store's insert writes what the generated columns computed, from the same text.
    const twins = stored.map((n) => ({ ...n, settlementId: `${n.settlementId}-twin` }));
    await Promise.all(twins.map((n) => store.insert(n)));
    expect(await columns(twins)).toEqual(generated);
    // A replica of an earlier release, inserting without them, gets them filled as before.
    for (const notification of later) await client.query(INSERT_OLD((i) => `$${i + 1}`), toInsertParams(notification));
    expect(await columns(later)).toEqual(generated);
  });
});
