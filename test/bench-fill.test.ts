/**
 * scripts/bench/fill-store.ts: the growth mode's rows must be what the webhook stores (the store reads
 * them back as valid records, and they summarise as the same notifications stored through the store's
 * insert do), it must build the schema through the store's migrations, and a column a later migration
 * adds without a default must stop it, by name, rather than be guessed.
 */
import { describe, expect, it } from 'vitest';
import { BUSY_ACCOUNTS, fillAccount, fillSettlementId, fillStore } from '../scripts/bench/fill-store.ts';
import type { CollectionNotificationRecord, NewCollectionNotification } from '../src/domain/index.ts';
import { createNotificationStore } from '../src/store/index.ts';
import type { NotificationStore, SummaryQuery } from '../src/store/types.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { silent, urlStoreBackends } from './helpers/stores.ts';

const DECIMAL = /^\d+\.\d{2}$/;
const HOUR = 3_600_000;

/** The filled notifications `from` to `to`, by their settlementIds, oldest first; every one must be stored. */
async function filled(store: NotificationStore, from: number, to: number): Promise<CollectionNotificationRecord[]> {
  const ids = Array.from({ length: to - from + 1 }, (_, i) => fillSettlementId(from + i));
  const records = await store.getMany(ids);
  expect(records.filter((record) => record === null)).toHaveLength(0);
  return records as CollectionNotificationRecord[];
}

/** What the webhook would have handed the store for this record: its fields, not its place in the log. */
function asDelivered(r: CollectionNotificationRecord): NewCollectionNotification {
  const { settlementId, sessionId, accountNumber, transactionAmount, settledAmount, feeAmount, vatAmount, currency, narration } = r;
  const { initiationTranRef, sourceAccountNumber, sourceAccountName, sourceBankName, channelId, transactionTime, receivedAt, rawBody } = r;
  return { settlementId, sessionId, accountNumber, transactionAmount, settledAmount, feeAmount, vatAmount, currency, narration,
    initiationTranRef, sourceAccountNumber, sourceAccountName, sourceBankName, channelId, transactionTime, receivedAt, rawBody };
}

/** The exact sum of two-decimal amounts, by BigInt kobo. */
function koboSum(amounts: string[]): string {
  const kobo = amounts.reduce((sum, amount) => sum + BigInt(amount.replace('.', '')), 0n).toString().padStart(3, '0');
  return `${kobo.slice(0, -2)}.${kobo.slice(-2)}`;
}

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

  test('writes amounts that add up, settled + fee + VAT = amount, even the smallest (the 55,647th was ₦9.29 under a ₦10 fee)', async () => {
    const database = await backend.create();
    await fillStore(database.storeUrl, { rows: 20, from: 55_640, ...quiet });
    const store = await createNotificationStore(database.storeUrl, { logger: silent });
    onCleanup(() => store.close());
    const records = await filled(store, 55_640, 55_659);
    for (const r of records) {
      for (const amount of [r.transactionAmount, r.settledAmount, r.feeAmount, r.vatAmount]) expect(amount, r.settlementId).toMatch(DECIMAL);
      expect(koboSum([r.settledAmount!, r.feeAmount!, r.vatAmount!]), r.settlementId).toBe(r.transactionAmount);
    }
  });

  test('fills rows that summarise as the same notifications stored through the store\'s insert do', async () => {
    // 3,000 notifications 31 s apart: 26 hours from 01:00 WAT, across a bank-local midnight.
    const fillDatabase = await backend.create();
    await fillStore(fillDatabase.storeUrl, { rows: 3_000, ...quiet });
    const fromFill = await createNotificationStore(fillDatabase.storeUrl, { logger: silent });
    onCleanup(() => fromFill.close());
    const records = await filled(fromFill, 1, 3_000);

    const insertDatabase = await backend.create();
    const fromInsert = await createNotificationStore(insertDatabase.storeUrl, { logger: silent });
    onCleanup(() => fromInsert.close());
    // As the webhook stores them: through insert, concurrent ones sharing a commit.
    for (let start = 0; start < records.length; start += 500) {
      const batch = records.slice(start, start + 500).map((record) => fromInsert.insert(asDelivered(record)));
      for (const result of await Promise.all(batch)) expect(result.status).toBe('inserted');
    }

    const [oldest, newest] = [Date.parse(records[0]!.transactionTime!), Date.parse(records.at(-1)!.transactionTime!)];
    const whole = { from: new Date(oldest - 24 * HOUR), to: new Date(newest + HOUR), timezone: 'Africa/Lagos' };
    const queries: SummaryQuery[] = [
      whole,
      { ...whole, accountNumber: BUSY_ACCOUNTS[0] },
      { ...whole, accountNumber: fillAccount(5) },
      // Cut inside the data, both ends between two notifications' times and on one.
      { from: new Date(oldest + 2 * HOUR + 1), to: new Date(Date.parse(records[2_900]!.transactionTime!)), timezone: 'Africa/Lagos' },
    ];
    for (const query of queries) expect(await fromFill.summarize(query), JSON.stringify(query)).toEqual(await fromInsert.summarize(query));

    const summary = await fromFill.summarize(whole);
    expect(summary).toMatchObject({ count: 3_000, transactionAmount: koboSum(records.map((r) => r.transactionAmount)) });
    expect(summary.settledAmount).toBe(koboSum(records.map((r) => r.settledAmount!)));
    expect(summary.days.filter((day) => day.count > 0)).toHaveLength(2);

    // SQLite: the very values the insert stores beside the text (PostgreSQL generates its own).
    if (fillDatabase.storeUrl.startsWith('postgres')) return;
    const columns = `SELECT settlement_id, event_ms, transaction_amount_kobo_hi, transaction_amount_kobo_lo, settled_amount_kobo_hi,
      settled_amount_kobo_lo, fee_amount_kobo_hi, fee_amount_kobo_lo, vat_amount_kobo_hi, vat_amount_kobo_lo, amounts_beyond_kobo
      FROM collection_notifications ORDER BY settlement_id`;
    expect(await fillDatabase.query(columns)).toEqual(await insertDatabase.query(columns));
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
