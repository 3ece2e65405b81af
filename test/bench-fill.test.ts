/**
 * scripts/bench/fill-store.ts: the growth mode's rows must be what the webhook stores (the store reads
 * them back as valid records), it must build the schema through the store's migrations, and a column a
 * later migration adds without a default must stop it, by name, rather than be guessed.
 */
import { describe, expect, it } from 'vitest';
import { BUSY_ACCOUNTS, fillAccount, fillSettlementId, fillStore } from '../scripts/bench/fill-store.ts';
import { createNotificationStore } from '../src/store/index.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { silent, urlStoreBackends } from './helpers/stores.ts';

const DECIMAL = /^\d+\.\d{2}$/;

describe.each(urlStoreBackends)('fill-store on $name', (backend) => {
  const test = it.runIf(backend.enabled);
  const quiet = { progress: () => {} };

  test('fills notifications the store reads back like the webhook\'s, continuing where the last fill stopped', async () => {
    const database = await backend.create();
    const lines: string[] = [];
    expect(await fillStore(database.storeUrl, { rows: 300, progress: (line) => lines.push(line) })).toMatchObject({ from: 1, to: 300, total: 300 });
    expect(lines.at(-1)).toMatch(/fill: 300 of 300 notifications \(\d[\d,]* rows\/s\)/);
    expect(await fillStore(database.storeUrl, { rows: 100, upTo: 350, ...quiet })).toMatchObject({ from: 301, to: 400, total: 400 });

    const store = await createNotificationStore(database.storeUrl, { logger: silent });
    onCleanup(() => store.close());
    const records = await store.getMany([fillSettlementId(1), fillSettlementId(400)]);
    for (const [i, record] of [[1, records[0]], [400, records[1]]] as const) {
      expect(record).toMatchObject({ settlementId: fillSettlementId(i), accountNumber: fillAccount(i), currency: 'NGN' });
      for (const amount of [record!.transactionAmount, record!.settledAmount, record!.feeAmount, record!.vatAmount]) expect(amount).toMatch(DECIMAL);
      expect(record!.transactionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00$/);
      expect(new Date(record!.receivedAt).toISOString()).toBe(record!.receivedAt);
      const body = JSON.parse(record!.rawBody);
      expect(body).toMatchObject({ settlementId: record!.settlementId, accountNumber: record!.accountNumber, transactionAmount: record!.transactionAmount });
    }
    // Newest first in a busy account: the fill's order is the position order.
    const page = await store.listNewestFirst({ accountNumber: BUSY_ACCOUNTS[0], limit: 3 });
    expect(page.map((r) => r.settlementId)).toEqual([...page.map((r) => r.settlementId)].sort().reverse());
    expect(page).toHaveLength(3);
  });

  test('leaves a column added later with a default to the database, and stops at one without, naming it', async () => {
    const database = await backend.create();
    await fillStore(database.storeUrl, { rows: 1, ...quiet });
    await database.query("ALTER TABLE collection_notifications ADD COLUMN added_later TEXT NOT NULL DEFAULT 'kept'");
    await fillStore(database.storeUrl, { rows: 1, ...quiet });
    expect(await database.query('SELECT DISTINCT added_later FROM collection_notifications')).toEqual([{ added_later: 'kept' }]);

    // SQLite's ALTER TABLE cannot add a NOT NULL column without a default at all; PostgreSQL's can.
    if (!database.storeUrl.startsWith('postgres')) return;
    await database.query("ALTER TABLE collection_notifications ADD COLUMN must_fill TEXT; UPDATE collection_notifications SET must_fill = 'x'");
    await database.query('ALTER TABLE collection_notifications ALTER COLUMN must_fill SET NOT NULL');
    await expect(fillStore(database.storeUrl, { rows: 1, ...quiet })).rejects.toThrow(/NOT NULL column\(s\) without a default .*: must_fill/);
  });
});
