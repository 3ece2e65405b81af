import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { capturingLogger, silent, storeBackends, tempSqlitePath, untilSettled } from '../../test/helpers/stores.ts';
import { comparePositions, NOTHING_ASKED, START_OF_LOG, UNCHECKED, type LogPosition } from '../domain/index.ts';
import { createNotificationStore } from './index.ts';
import { loadMigrations } from './migrations.ts';
import type { InsertResult } from './types.ts';

const anyPosition = { txid: expect.any(Number), seq: expect.any(Number) };

/** The position an insert was stored at; throws when it was not stored. */
function positionOf(result: InsertResult): LogPosition {
  if (result.status !== 'inserted') throw new Error('not inserted');
  return result.notification.position;
}

describe.each(storeBackends)('NotificationStore on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;
  const testShared = backend.enabled && backend.shared ? it : it.skip;

  /** A fresh database and a store on it, both removed after the test. */
  async function setup() {
    const database = await backend.create();
    return { database, open: database.open, store: await database.open() };
  }

  test('stores every field exactly as given and getMany returns it', async () => {
    const { store } = await setup();
    const rawBody = `{"tranRemarks":"${'Ọ̀dọ́ paid ₦1,500 for ẹ̀wà 🚀 — "quotes" \\n '.repeat(4_000)}"}`;
    // An import by reconciliation: the bank's record, decided as it is stored.
    const confirmation = { status: 'CONFIRMED', checkedAt: '2024-05-01T09:15:02.000Z', differences: [], acknowledgedByBank: true } as const;
    const full = notification({
      transactionAmount: '1500.00',
      settledAmount: '0.10',
      narration: 'a "quoted", {braced} \\ NULL',
      sessionId: 'NULL',
      rawBody,
      source: 'RECONCILED',
      confirmation,
    });
    const sparse = notification({
      sessionId: '',
      settledAmount: null,
      feeAmount: null,
      vatAmount: null,
      currency: null,
      narration: null,
      sourceAccountNumber: null,
      sourceAccountName: null,
      sourceBankName: null,
      transactionTime: null,
    });

    const first = await store.insert(full);
    const second = await store.insert(sparse);
    const asImported = { ...full, confirmation: { ...NOTHING_ASKED, ...confirmation } };
    expect(first).toEqual({ status: 'inserted', notification: { ...asImported, position: anyPosition }, settled: anyPosition });
    // A delivery stored without a word of confirmation: from the webhook, unchecked.
    const asDelivered = { ...sparse, source: 'WEBHOOK', confirmation: { ...UNCHECKED, ...NOTHING_ASKED } };
    expect(second).toEqual({ status: 'inserted', notification: { ...asDelivered, position: anyPosition }, settled: anyPosition });

    const [readFull, readSparse] = await store.getMany([full.settlementId, sparse.settlementId]);
    expect(readFull).toStrictEqual({ ...asImported, position: positionOf(first) });
    expect(readFull?.transactionAmount).toBe('1500.00');
    expect(readFull?.rawBody).toBe(rawBody);
    expect(readSparse).toStrictEqual({ ...asDelivered, position: positionOf(second) });
  });

  test('stores a lone surrogate (a JSON body may escape one into a field) as U+FFFD, failing no other insert of its batch', async () => {
    const { store } = await setup();
    const odd = notification({ narration: 'half a pair \ud83d here', sourceAccountName: '\udc00' });
    const [oddResult, otherResult] = await Promise.all([store.insert(odd), store.insert(notification())]);
    expect([oddResult.status, otherResult.status]).toEqual(['inserted', 'inserted']);
    const [stored] = await store.getMany([odd.settlementId]);
    expect(stored).toMatchObject({ narration: 'half a pair \ufffd here', sourceAccountName: '\ufffd' });
  });

  test('refuses alike on every backend an id longer than 64 characters, which a PostgreSQL index could not hold, failing no other insert of its batch', async () => {
    const { store, database } = await setup();
    const longSession = notification({ sessionId: 'S'.repeat(3_500) });
    const longSettlement = notification({ settlementId: '9'.repeat(65) });
    const fits = notification({ sessionId: 'S'.repeat(64), settlementId: '9'.repeat(64) });
    const results = await Promise.allSettled([store.insert(longSession), store.insert(longSettlement), store.insert(fits)]);
    expect(results.map((result) => (result.status === 'rejected' ? (result.reason as Error).message : result.value.status))).toEqual([
      'the store refused this notification: its sessionId is longer than 64 characters',
      'the store refused this notification: its settlementId is longer than 64 characters',
      'inserted',
    ]);
    expect(results[0]).toMatchObject({ reason: { name: 'UnstorableNotificationError' } });
    expect(await database.countRows()).toBe(1);
  });

  test('getMany keeps the requested order and answers null for settlementIds not stored', async () => {
    const { store } = await setup();
    const a = notification();
    const b = notification();
    await store.insert(a);
    await store.insert(b);
    const found = await store.getMany([b.settlementId, 'missing', a.settlementId, b.settlementId]);
    expect(found.map((record) => record?.settlementId ?? null)).toEqual([b.settlementId, null, a.settlementId, b.settlementId]);
    expect(await store.getMany([])).toEqual([]);
  });

  test('finds the first notification stored with a sessionId, settled or not, whatever its account; null for none', async () => {
    const { store } = await setup();
    const first = notification({ sessionId: 'NIP-SESSION-1', accountNumber: '1234567890', source: 'RECONCILED' });
    const second = notification({ sessionId: 'NIP-SESSION-1' });
    await store.insert(first);
    await store.insert(second);
    await store.insert(notification({ sessionId: 'NIP-SESSION-2' }));
    expect(await store.findBySessionId('NIP-SESSION-1')).toMatchObject({
      settlementId: first.settlementId,
      accountNumber: '1234567890',
      source: 'RECONCILED',
    });
    expect(await store.findBySessionId('NIP-SESSION-3')).toBeNull();
    // Exactly: a session id is never matched by case or by a prefix.
    expect(await store.findBySessionId('nip-session-1')).toBeNull();
    expect(await store.findBySessionId('NIP-SESSION')).toBeNull();
  });

  test('answers duplicate to a second insert of a settlementId and changes nothing', async () => {
    const { store } = await setup();
    const original = notification();
    const first = await store.insert(original);
    const again = await store.insert({ ...original, transactionAmount: '9999.99', rawBody: '{"changed":true}' });
    expect(again).toEqual({ status: 'duplicate' });
    const [stored] = await store.getMany([original.settlementId]);
    expect(stored).toMatchObject({ transactionAmount: '1500.00', rawBody: original.rawBody });
    await untilSettled(store, [first]);
    expect(await store.listAfter({ after: START_OF_LOG, limit: 10 })).toHaveLength(1);
  });

  test('gives exactly one inserted among 200 concurrent inserts of one settlementId', async () => {
    const { store } = await setup();
    const one = notification();
    const results = await Promise.all(Array.from({ length: 200 }, () => store.insert(one)));
    expect(results.filter((result) => result.status === 'inserted')).toHaveLength(1);
    await untilSettled(store, results);
    expect(await store.listAfter({ after: START_OF_LOG, limit: 500 })).toHaveLength(1);
  });

  testShared('gives exactly one inserted among 200 concurrent inserts across two stores sharing the database', async () => {
    const { open, store } = await setup();
    const other = await open();
    const one = notification();
    const results = await Promise.all(Array.from({ length: 200 }, (_, index) => (index % 2 ? other : store).insert(one)));
    expect(results.filter((result) => result.status === 'inserted')).toHaveLength(1);
    await untilSettled(other, results);
    expect(await other.listAfter({ after: START_OF_LOG, limit: 500 })).toHaveLength(1);
  });

  test('assigns positions strictly increasing in insertion order, and lists them in that order', async () => {
    const { store } = await setup();
    const positions: LogPosition[] = [];
    for (let index = 0; index < 5; index += 1) positions.push(positionOf(await store.insert(notification())));
    expect(positions.every((position, index) => index === 0 || comparePositions(position, positions[index - 1]!) > 0)).toBe(true);
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => store.insert(notification())));
    await untilSettled(store, [...positions, ...concurrent]);
    const all = (await store.listAfter({ after: START_OF_LOG, limit: 100 })).map((record) => record.position);
    expect(all).toEqual([...all].sort(comparePositions));
    expect(all.slice(0, 5)).toEqual(positions);
    expect(new Set(all.map((position) => `${position.txid}.${position.seq}`)).size).toBe(5 + concurrent.length);
    expect(await store.settledHead()).toEqual(all.at(-1));
  });

  test('pages listNewestFirst before a position and filters it by account', async () => {
    const { store } = await setup();
    expect(await store.settledHead()).toEqual(START_OF_LOG);
    const accounts = ['1111111111', '2222222222', '1111111111', '1111111111', '2222222222'];
    const stored = [];
    for (const accountNumber of accounts) stored.push(await store.insert(notification({ accountNumber })));
    await untilSettled(store, stored);
    const positions = (await store.listAfter({ after: START_OF_LOG, limit: 10 })).map((record) => record.position);

    const page1 = await store.listNewestFirst({ limit: 2 });
    const page2 = await store.listNewestFirst({ limit: 2, before: page1.at(-1)?.position });
    const page3 = await store.listNewestFirst({ limit: 2, before: page2.at(-1)?.position });
    expect([...page1, ...page2, ...page3].map((record) => record.position)).toEqual([...positions].reverse());
    expect(page3).toHaveLength(1);

    const ofAccount = await store.listNewestFirst({ accountNumber: '1111111111', limit: 10 });
    expect(ofAccount.map((record) => record.position)).toEqual([positions[3], positions[2], positions[0]]);
    const olderOfAccount = await store.listNewestFirst({ accountNumber: '1111111111', before: positions[3], limit: 1 });
    expect(olderOfAccount.map((record) => record.position)).toEqual([positions[2]]);
    expect(await store.listNewestFirst({ accountNumber: '9999999999', limit: 10 })).toEqual([]);
  });

  test('lists oldest first after a position with listAfter, filtered by account', async () => {
    const { store } = await setup();
    const accounts = ['1111111111', '2222222222', '1111111111', '2222222222', '1111111111'];
    const stored = [];
    for (const accountNumber of accounts) stored.push(await store.insert(notification({ accountNumber })));
    await untilSettled(store, stored);
    const positions = (await store.listAfter({ after: START_OF_LOG, limit: 10 })).map((record) => record.position);
    expect(positions).toHaveLength(5);

    const after = await store.listAfter({ after: positions[1]!, limit: 10 });
    expect(after.map((record) => record.position)).toEqual(positions.slice(2));
    const limited = await store.listAfter({ after: positions[1]!, limit: 2 });
    expect(limited.map((record) => record.position)).toEqual(positions.slice(2, 4));
    const ofAccount = await store.listAfter({ accountNumber: '2222222222', after: START_OF_LOG, limit: 10 });
    expect(ofAccount.map((record) => record.position)).toEqual([positions[1], positions[3]]);
    expect(await store.listAfter({ after: positions[4]!, limit: 10 })).toEqual([]);
  });

  test('tells with each insert a position its commit found settled: everything at or below it is listed at once', async () => {
    const { store } = await setup();
    const results = [];
    for (let index = 0; index < 3; index += 1) results.push(await store.insert(notification()));
    for (const result of results) {
      if (result.status !== 'inserted') throw new Error('not inserted');
      const listed = await store.listAfter({ after: START_OF_LOG, limit: 10 });
      const below = listed.filter((record) => comparePositions(record.position, result.settled) <= 0);
      const every = await Promise.all(
        results.map(async (r) => (await store.getMany([r.status === 'inserted' ? r.notification.settlementId : '']))[0]!),
      );
      expect(below).toEqual(every.filter((record) => comparePositions(record.position, result.settled) <= 0));
      // Where one writer commits at a time in seq order, a commit settles itself.
      if (store.kind === 'sqlite') expect(result.settled).toEqual(result.notification.position);
      else expect(result.settled.txid).toBeLessThanOrEqual(result.notification.position.txid);
    }
  });

  test('rejects an insert whose commit fails, stores nothing, and works again once the fault is gone', async () => {
    const { database, store } = await setup();
    const retried = notification();
    await database.breakInserts();
    await expect(store.insert(retried)).rejects.toThrow(/disk full/);
    expect(await store.getMany([retried.settlementId])).toEqual([null]);
    expect(await store.listAfter({ after: START_OF_LOG, limit: 10 })).toEqual([]);

    await database.repairInserts();
    // The bank's retry of the same notification now succeeds: the failed attempt left nothing behind.
    expect(await store.insert(retried)).toMatchObject({ status: 'inserted' });
    expect(await store.insert(notification())).toMatchObject({ status: 'inserted' });
  });

  test("answers a stored notification's money fields, null for a settlementId not stored", async () => {
    const { store } = await setup();
    const kept = notification({ transactionAmount: '1500.0', currency: null });
    await store.insert(kept);
    const money = {
      accountNumber: kept.accountNumber,
      transactionAmount: '1500.0',
      settledAmount: kept.settledAmount,
      feeAmount: kept.feeAmount,
      vatAmount: kept.vatAmount,
      currency: null,
      sourceAccountNumber: kept.sourceAccountNumber,
    };
    expect(await store.moneyOf(kept.settlementId)).toEqual(money);
    expect(await store.moneyOf('never-stored')).toBeNull();
  });

  testShared('reads the money fields of a notification another store on the database wrote', async () => {
    const { open, store } = await setup();
    const other = await open();
    const kept = notification({ feeAmount: null });
    await other.insert(kept);
    // Found stored by this store's own insert: it knows the id, not yet the fields.
    expect(await store.insert({ ...kept, transactionAmount: '9.99' })).toEqual({ status: 'duplicate' });
    expect(await store.moneyOf(kept.settlementId)).toMatchObject({ transactionAmount: kept.transactionAmount, feeAmount: null });
  });

  testShared('keeps the data across close and reopen', async () => {
    const { open, store } = await setup();
    const kept = notification();
    await store.insert(kept);
    await store.close();
    const reopened = await open();
    const [stored] = await reopened.getMany([kept.settlementId]);
    expect(stored).toMatchObject(kept);
    expect(await reopened.insert(kept)).toEqual({ status: 'duplicate' });
  });

  test('keeps the bytes of a body that is not UTF-8 exactly, and none beside a body whose text gives them back', async () => {
    const { store } = await setup();
    // A Latin-1 é: its text reads U+FFFD, its bytes are kept beside it.
    const latin1 = Buffer.from(
      '{"tranRemarks":"Caf\u00e9 \u00e0 Lagos"}'.replace(/\\u00(e9|e0)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    );
    const odd = notification({ rawBody: latin1.toString('utf8'), rawBodyBytes: new Uint8Array(latin1) });
    const plain = notification();
    const results = [await store.insert(odd), await store.insert(plain)];
    await untilSettled(store, results);
    const [readOdd, readPlain] = await store.getMany([odd.settlementId, plain.settlementId]);
    expect(readOdd!.rawBody).toBe('{"tranRemarks":"Caf\ufffd \ufffd Lagos"}');
    expect(Buffer.from(readOdd!.rawBodyBytes!)).toEqual(latin1);
    expect(readPlain!.rawBodyBytes).toBeNull();
    const listed = await store.listAfter({ after: START_OF_LOG, limit: 10 });
    expect(listed.map((record) => record.rawBodyBytes && Buffer.from(record.rawBodyBytes))).toEqual([latin1, null]);
  });

  test('migrates a store of the first schema: its notifications keep their text, and what awaits review in its quarantine counts', async () => {
    const database = await backend.create();
    const kind = backend.name === 'PostgreSQL' ? 'postgres' : 'sqlite';
    const [first] = await loadMigrations(kind);
    const postgres = kind === 'postgres';
    await database.exec(`${first!.sql};
      CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ${postgres ? 'TIMESTAMPTZ NOT NULL DEFAULT now()' : 'TEXT NOT NULL'});
      INSERT INTO schema_migrations VALUES (1, 'store_schema', ${postgres ? 'now()' : "'2026-01-01T00:00:00.000Z'"});
      INSERT INTO collection_notifications (settlement_id, session_id, account_number, transaction_amount, received_at, raw_body${postgres ? ', event_time, transaction_amount_numeric' : ''})
        VALUES ('OLD-1', 'S-old', '0123456789', '1500.00', '2026-01-01T00:00:00.000Z', '{"tranRemarks":"Café"}'${postgres ? ', now(), 1500' : ''});
      INSERT INTO collection_quarantine (kind, reason, response_code, received_at, raw_body, reviewed_at)
        VALUES ('REJECTED', 'invalid_account_number', '02', '2026-01-01T00:00:00.000Z', ${postgres ? "'\\x7b7d'" : "x'7b7d'"}, NULL),
               ('REJECTED', 'invalid_account_number', '02', '2026-01-01T00:00:00.000Z', ${postgres ? "'\\x7b7d7d'" : "x'7b7d7d'"}, '2026-01-02T00:00:00.000Z')`);
    const store = await database.open();
    const [old] = await store.getMany(['OLD-1']);
    expect(old).toMatchObject({ rawBody: '{"tranRemarks":"Café"}', rawBodyBytes: null });
    expect(await store.quarantine.countUnreviewed()).toBe(1);
    expect(await store.quarantine.keep([], { maxRows: 2, maxBytes: 4 })).toEqual([]);
    expect(await database.query('SELECT unreviewed, unreviewed_bytes FROM collection_quarantine_backlog')).toEqual([
      postgres ? { unreviewed: '1', unreviewed_bytes: '2' } : { unreviewed: 1, unreviewed_bytes: 2 },
    ]);
  });

  test('records each applied migration with its version and name', async () => {
    const { database, store } = await setup();
    const rows = await database.query('SELECT version, name, applied_at FROM schema_migrations ORDER BY version');
    const migrations = await loadMigrations(store.kind);
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name, applied_at: expect.anything() })));
    expect(rows[0]).toMatchObject({ version: 1, name: 'store_schema' });
  });

  testShared('applies no migration when opened a second time, nor when two open together', async () => {
    const { database, open } = await setup();
    const before = await database.query('SELECT version, name, applied_at FROM schema_migrations');
    const { logger, lines } = capturingLogger();
    await Promise.all([open(logger), open(logger)]);
    expect(await database.query('SELECT version, name, applied_at FROM schema_migrations')).toEqual(before);
    expect(lines.filter((line) => line.includes('applied store migration'))).toEqual([]);
  });

  test('rejects every call after close, and closes twice without error', async () => {
    const { store } = await setup();
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
    const range = { from: new Date('2024-05-01T00:00:00Z'), to: new Date('2024-05-02T00:00:00Z') };
    const calls = [
      store.ping(),
      store.insert(notification()),
      store.getMany([]),
      store.listAfter({ after: START_OF_LOG, limit: 1 }),
      store.listNewestFirst({ limit: 1 }),
      store.listNewestFirst({ limit: 1, ...range }),
      store.settledHead(),
      store.committedHead(),
      store.summarize({ ...range, timezone: 'Africa/Lagos' }),
      store.size(),
    ];
    for (const call of calls)
      await expect(call).rejects.toThrow(`The ${backend.name.startsWith('PostgreSQL') ? 'postgres' : 'sqlite'} store is closed`);
  });

  test('refuses a negative limit instead of listing everything', async () => {
    const { store } = await setup();
    await expect(store.listAfter({ after: START_OF_LOG, limit: -1 })).rejects.toThrow(RangeError);
  });
});

describe('NotificationStore on a SQLite file, duplicates', () => {
  it('writes nothing to disk for a duplicate: no commit, no fsync, however often the bank retries', async () => {
    const path = tempSqlitePath();
    const store = await createNotificationStore(`sqlite:${path}`, { logger: silent });
    onCleanup(() => store.close());
    const wal = () => statSync(`${path}-wal`).size;

    const first = notification();
    await store.insert(first);
    const afterFirst = wal();
    for (let i = 0; i < 5; i += 1) expect(await store.insert(first)).toEqual({ status: 'duplicate' });
    expect(wal()).toBe(afterFirst);

    const second = await store.insert(notification());
    expect(wal()).toBeGreaterThan(afterFirst);
    // Nor do retries use up positions: the next notification follows the first directly.
    const [stored] = await store.getMany([first.settlementId]);
    expect(positionOf(second).seq).toBe(stored!.position.seq + 1);
  });
});
