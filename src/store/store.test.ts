import { statSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { capturingLogger, databaseUrl, isolatedPostgresUrl, silent, storeBackends, tempSqlitePath } from '../../test/helpers/stores.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createNotificationStore } from './index.ts';
import { loadMigrations } from './migrations.ts';

describe.each(storeBackends)('NotificationStore on $name', (backend) => {
  const test = it.runIf(backend.enabled);
  const testShared = it.runIf(backend.enabled && backend.shared);

  /** A fresh database and a store on it, both removed after the test. */
  async function setup() {
    const database = await backend.create();
    return { database, open: database.open, store: await database.open() };
  }

  test('stores every field exactly as given and getMany returns it', async () => {
    const { store } = await setup();
    const rawBody = `{"tranRemarks":"${'Ọ̀dọ́ paid ₦1,500 for ẹ̀wà 🚀 — "quotes" \\n '.repeat(4_000)}"}`;
    const full = notification({ transactionAmount: '1500.00', settledAmount: '0.10', rawBody });
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
    expect(first).toEqual({ status: 'inserted', notification: { ...full, seq: expect.any(Number) } });
    expect(second).toEqual({ status: 'inserted', notification: { ...sparse, seq: expect.any(Number) } });

    const [readFull, readSparse] = await store.getMany([full.settlementId, sparse.settlementId]);
    expect(readFull).toStrictEqual({ ...full, seq: first.status === 'inserted' ? first.notification.seq : -1 });
    expect(readFull?.transactionAmount).toBe('1500.00');
    expect(readFull?.rawBody).toBe(rawBody);
    expect(readSparse).toStrictEqual({ ...sparse, seq: second.status === 'inserted' ? second.notification.seq : -1 });
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

  test('answers duplicate to a second insert of a settlementId and changes nothing', async () => {
    const { store } = await setup();
    const original = notification();
    await store.insert(original);
    const again = await store.insert({ ...original, transactionAmount: '9999.99', rawBody: '{"changed":true}' });
    expect(again).toEqual({ status: 'duplicate' });
    const [stored] = await store.getMany([original.settlementId]);
    expect(stored).toMatchObject({ transactionAmount: '1500.00', rawBody: original.rawBody });
    expect(await store.listAfter({ afterSeq: 0, limit: 10 })).toHaveLength(1);
  });

  test('gives exactly one inserted among 200 concurrent inserts of one settlementId', async () => {
    const { store } = await setup();
    const one = notification();
    const results = await Promise.all(Array.from({ length: 200 }, () => store.insert(one)));
    expect(results.filter((result) => result.status === 'inserted')).toHaveLength(1);
    expect(await store.listAfter({ afterSeq: 0, limit: 500 })).toHaveLength(1);
  });

  testShared('gives exactly one inserted among 200 concurrent inserts across two stores sharing the database', async () => {
    const { open, store } = await setup();
    const other = await open();
    const one = notification();
    const results = await Promise.all(Array.from({ length: 200 }, (_, index) => (index % 2 ? other : store).insert(one)));
    expect(results.filter((result) => result.status === 'inserted')).toHaveLength(1);
    expect(await other.listAfter({ afterSeq: 0, limit: 500 })).toHaveLength(1);
  });

  test('assigns seq strictly increasing in insertion order', async () => {
    const { store } = await setup();
    const seqs: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      const result = await store.insert(notification());
      if (result.status === 'inserted') seqs.push(result.notification.seq);
    }
    expect(seqs).toHaveLength(5);
    expect(seqs.every((seq, index) => index === 0 || seq > (seqs[index - 1] ?? Infinity))).toBe(true);
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => store.insert(notification())));
    const all = await store.listAfter({ afterSeq: 0, limit: 100 });
    expect(all.map((record) => record.seq)).toEqual([...all.map((record) => record.seq)].sort((a, b) => a - b));
    expect(new Set(all.map((record) => record.seq)).size).toBe(5 + concurrent.length);
  });

  test('pages listNewestFirst with beforeSeq and filters it by account', async () => {
    const { store } = await setup();
    const accounts = ['1111111111', '2222222222', '1111111111', '1111111111', '2222222222'];
    for (const accountNumber of accounts) await store.insert(notification({ accountNumber }));
    const all = await store.listAfter({ afterSeq: 0, limit: 10 });
    const seqs = all.map((record) => record.seq);

    const page1 = await store.listNewestFirst({ limit: 2 });
    const page2 = await store.listNewestFirst({ limit: 2, beforeSeq: page1.at(-1)?.seq });
    const page3 = await store.listNewestFirst({ limit: 2, beforeSeq: page2.at(-1)?.seq });
    expect([...page1, ...page2, ...page3].map((record) => record.seq)).toEqual([...seqs].reverse());
    expect(page3).toHaveLength(1);

    const ofAccount = await store.listNewestFirst({ accountNumber: '1111111111', limit: 10 });
    expect(ofAccount.map((record) => record.seq)).toEqual([seqs[3], seqs[2], seqs[0]]);
    const olderOfAccount = await store.listNewestFirst({ accountNumber: '1111111111', beforeSeq: seqs[3], limit: 1 });
    expect(olderOfAccount.map((record) => record.seq)).toEqual([seqs[2]]);
    expect(await store.listNewestFirst({ accountNumber: '9999999999', limit: 10 })).toEqual([]);
  });

  test('lists oldest first after a seq with listAfter, filtered by account', async () => {
    const { store } = await setup();
    const accounts = ['1111111111', '2222222222', '1111111111', '2222222222', '1111111111'];
    for (const accountNumber of accounts) await store.insert(notification({ accountNumber }));
    const seqs = (await store.listAfter({ afterSeq: 0, limit: 10 })).map((record) => record.seq);
    expect(seqs).toHaveLength(5);

    const after = await store.listAfter({ afterSeq: seqs[1] ?? 0, limit: 10 });
    expect(after.map((record) => record.seq)).toEqual(seqs.slice(2));
    const limited = await store.listAfter({ afterSeq: seqs[1] ?? 0, limit: 2 });
    expect(limited.map((record) => record.seq)).toEqual(seqs.slice(2, 4));
    const ofAccount = await store.listAfter({ accountNumber: '2222222222', afterSeq: 0, limit: 10 });
    expect(ofAccount.map((record) => record.seq)).toEqual([seqs[1], seqs[3]]);
    expect(await store.listAfter({ afterSeq: seqs[4] ?? 0, limit: 10 })).toEqual([]);
  });

  test('rejects an insert whose commit fails, stores nothing, and works again once the fault is gone', async () => {
    const { database, store } = await setup();
    const retried = notification();
    await database.breakInserts();
    await expect(store.insert(retried)).rejects.toThrow(/disk full/);
    expect(await store.getMany([retried.settlementId])).toEqual([null]);
    expect(await store.listAfter({ afterSeq: 0, limit: 10 })).toEqual([]);

    await database.repairInserts();
    // The bank's retry of the same notification now succeeds: the failed attempt left nothing behind.
    expect(await store.insert(retried)).toMatchObject({ status: 'inserted' });
    expect(await store.insert(notification())).toMatchObject({ status: 'inserted' });
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

  test('records each applied migration with its version and name', async () => {
    const { database, store } = await setup();
    const rows = await database.query('SELECT version, name, applied_at FROM schema_migrations ORDER BY version');
    const migrations = await loadMigrations(store.kind);
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name, applied_at: expect.anything() })));
    expect(rows[0]).toMatchObject({ version: 1, name: 'collection_notifications' });
  });

  testShared('applies no migration when opened a second time, nor when two open together', async () => {
    const { database, open } = await setup();
    const before = await database.query('SELECT version, name, applied_at FROM schema_migrations');
    const { logger, lines } = capturingLogger();
    await Promise.all([open(logger), open(logger)]);
    expect(await database.query('SELECT version, name, applied_at FROM schema_migrations')).toEqual(before);
    expect(lines.filter((line) => line.includes('applied store migration'))).toEqual([]);
  });

  test('rejects ping and insert after close, and closes twice without error', async () => {
    const { store } = await setup();
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
    await expect(store.ping()).rejects.toThrow(/closed/);
    await expect(store.insert(notification())).rejects.toThrow(/closed/);
  });

  test('refuses a negative limit instead of listing everything', async () => {
    const { store } = await setup();
    await expect(store.listAfter({ afterSeq: 0, limit: -1 })).rejects.toThrow(RangeError);
  });
});

describe.runIf(databaseUrl !== undefined)('NotificationStore on PostgreSQL, across replicas', () => {
  it('commits inserts in seq order, so a later insert waits for an earlier one still in flight', async () => {
    const schemaUrl = await isolatedPostgresUrl(databaseUrl ?? '');
    // Its own application_name tells this test's sessions apart from other suites' on the server.
    const url = new URL(schemaUrl);
    const applicationName = `store-order-${Date.now()}`;
    url.searchParams.set('application_name', applicationName);
    const open = () => createNotificationStore(url.toString(), { logger: silent });
    const [first, second] = await Promise.all([open(), open()]);
    onCleanup(() => first.close());
    onCleanup(() => second.close());
    // Ended before the stores close, so a stalled insert is never left waiting on its gate.
    const admin = new pg.Client({ connectionString: schemaUrl });
    await admin.connect();
    onCleanup(() => admin.end());

    // The slow insert draws its seq, then stalls inside its transaction until the test lets it go.
    const gate = 424_242;
    await admin.query(`CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.settlement_id = 'SLOW' THEN PERFORM pg_advisory_xact_lock(${gate}); END IF; RETURN NEW; END $$;
      CREATE TRIGGER stall BEFORE INSERT ON collection_notifications FOR EACH ROW EXECUTE FUNCTION stall()`);
    await admin.query('SELECT pg_advisory_lock($1)', [gate]);
    const waiting = async () => {
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = $1",
        [applicationName],
      );
      return rows[0].n as number;
    };
    const slow = first.insert(notification({ settlementId: 'SLOW' }));
    slow.catch(() => undefined); // awaited below; a failure here must not surface as unhandled first
    await waitFor(async () => ((await waiting()) >= 1 ? true : undefined));
    let fastDone = false;
    const fast = second.insert(notification()).finally(() => (fastDone = true));
    fast.catch(() => undefined);
    // Now both are blocked: the slow one on the gate, the fast one on the store's insert lock.
    await waitFor(async () => (fastDone || (await waiting()) >= 2 ? true : undefined));
    expect(fastDone).toBe(false);
    expect(await first.listAfter({ afterSeq: 0, limit: 10 })).toEqual([]);

    await admin.query('SELECT pg_advisory_unlock($1)', [gate]);
    const [slowResult, fastResult] = await Promise.all([slow, fast]);
    if (slowResult.status !== 'inserted' || fastResult.status !== 'inserted') throw new Error('both should insert');
    expect(fastResult.notification.seq).toBeGreaterThan(slowResult.notification.seq);
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
    expect(second.status === 'inserted' && second.notification.seq).toBe(stored!.seq + 1);
  });
});
