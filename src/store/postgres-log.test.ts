/**
 * The PostgreSQL store's log without an insert lock: transactions of several writers commit in any
 * order, and the settled log still hands every notification out once, in (txid, seq) order.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { capturingLogger, databaseUrl, isolatedPostgresUrl, postgresSession, storeAt } from '../../test/helpers/stores.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { START_OF_LOG, type CollectionNotificationRecord, type LogPosition } from '../domain/index.ts';
import type { InsertResult, NotificationStore } from './types.ts';

/** Inserts one row as any writer would, leaving txid and seq to the table's defaults. */
async function insertRow(client: pg.Client, settlementId: string): Promise<{ seq: string }> {
  const { rows } = await client.query<{ seq: string }>(
    `INSERT INTO collection_notifications (settlement_id, session_id, account_number, transaction_amount, received_at, raw_body,
       event_time, transaction_amount_numeric)
     VALUES ($1, '', '0123456789', '1.00', '2024-05-01T09:15:01Z', '{}', '2024-05-01T09:15:01Z', 1.00) RETURNING seq`,
    [settlementId],
  );
  return rows[0]!;
}

/** Follows the store's log as a replica's follower does: from a position, page by page. */
/**
 * Reads until the follower has handed out `count` notifications: the settled log also waits for
 * transactions of other suites sharing the server, which only delay it.
 */
async function readUntil(log: { read(): Promise<unknown>; handedOut(): string[] }, count: number): Promise<void> {
  await waitFor(async () => {
    await log.read();
    return log.handedOut().length >= count ? true : undefined;
  });
}

function follower(store: NotificationStore, from: LogPosition = START_OF_LOG) {
  const handedOut: CollectionNotificationRecord[] = [];
  let position = from;
  return {
    handedOut: () => handedOut.map((record) => record.settlementId),
    async read() {
      for (;;) {
        const page = await store.listAfter({ after: position, limit: 2 });
        for (const record of page) handedOut.push(record);
        position = page.at(-1)?.position ?? position;
        if (page.length < 2) return;
      }
    },
  };
}

const inserted = (result: InsertResult) => (result.status === 'inserted' ? result.notification : undefined);

describe.runIf(databaseUrl !== undefined)('the PostgreSQL store without an insert lock', () => {
  it('hands out, exactly once each, the rows of two writers whose commits finish out of order', async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    const store = await storeAt(url);
    const log = follower(store);
    const [older, younger] = [await postgresSession(url), await postgresSession(url)];

    // The older transaction takes its id first, the younger inserts (drawing the lower seq) and
    // stays open, then the older inserts (the higher seq) and commits first.
    await older.query('BEGIN');
    await older.query('SELECT pg_current_xact_id()');
    await younger.query('BEGIN');
    const low = await insertRow(younger, 'YOUNGER');
    const high = await insertRow(older, 'OLDER');
    expect(Number(low.seq)).toBeLessThan(Number(high.seq));
    await older.query('COMMIT');

    // OLDER is settled (no transaction older than it runs); YOUNGER is not committed. A reader that
    // went by seq would now stand at OLDER's seq, above YOUNGER's, and never hand YOUNGER out.
    await readUntil(log, 1);
    expect(log.handedOut()).toEqual(['OLDER']);

    await younger.query('COMMIT');
    await readUntil(log, 2);
    await log.read();
    expect(log.handedOut()).toEqual(['OLDER', 'YOUNGER']);
  });

  it('answers a later insert while an earlier one is still open, and lists neither until both have settled', async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    const [first, second] = [await storeAt(url), await storeAt(url)];
    const admin = await postgresSession(url);
    const log = follower(second);

    // The slow insert takes its transaction id and seq, then stalls until the test lets it go.
    const gate = 424_243;
    await admin.query(`CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.settlement_id = 'SLOW' THEN PERFORM pg_advisory_xact_lock(${gate}); END IF; RETURN NEW; END $$;
      CREATE TRIGGER stall BEFORE INSERT ON collection_notifications FOR EACH ROW EXECUTE FUNCTION stall()`);
    await admin.query('SELECT pg_advisory_lock($1)', [gate]);
    const slow = first.insert(notification({ settlementId: 'SLOW' }));
    slow.catch(() => undefined); // awaited below; a failure here must not surface as unhandled first
    await waitFor(async () => {
      const { rows } = await admin.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted", [gate]);
      return rows.length > 0 ? true : undefined;
    });

    // No lock to wait for: the fast insert commits at once, and reads by settlementId see it.
    const fast = inserted(await second.insert(notification({ settlementId: 'FAST' })));
    expect(fast).toBeDefined();
    expect((await second.getMany(['FAST']))[0]?.position).toEqual(fast!.position);
    // But it is not settled: the slow transaction, older than its own, could still commit below it.
    await log.read();
    expect(log.handedOut()).toEqual([]);
    expect(await second.listNewestFirst({ limit: 10 })).toEqual([]);
    expect(await second.settledHead()).toEqual(START_OF_LOG);

    await admin.query('SELECT pg_advisory_unlock($1)', [gate]);
    const slowRecord = inserted(await slow);
    await readUntil(log, 2);
    expect(log.handedOut()).toEqual(['SLOW', 'FAST']);
    expect(fast!.position.txid).toBeGreaterThan(slowRecord!.position.txid);
    expect(await second.settledHead()).toEqual(fast!.position);
    expect((await second.listNewestFirst({ limit: 10 })).map((record) => record.settlementId)).toEqual(['FAST', 'SLOW']);
  });

  it('gives a batch of duplicates only no transaction id, so it writes no commit record and flushes no WAL', async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    const store = await storeAt(url);
    const stored = notification();
    await store.insert(stored);
    // Raised inside the insert's own statement when it has an id but stored nothing.
    const admin = await postgresSession(url);
    await admin.query(`CREATE FUNCTION no_xid_for_nothing() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF pg_current_xact_id_if_assigned() IS NOT NULL AND NOT EXISTS (SELECT FROM stored) THEN
          RAISE EXCEPTION 'a batch that stored nothing was given a transaction id';
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER no_xid_for_nothing AFTER INSERT ON collection_notifications
        REFERENCING NEW TABLE AS stored FOR EACH STATEMENT EXECUTE FUNCTION no_xid_for_nothing()`);

    const retries = await Promise.all([store.insert(stored), store.insert({ ...stored, narration: 'again' }), store.insert(stored)]);
    expect(retries).toEqual([{ status: 'duplicate' }, { status: 'duplicate' }, { status: 'duplicate' }]);
    // A batch that stores something still commits, its duplicates answered as such.
    const mixed = await Promise.all([store.insert(stored), store.insert(notification())]);
    expect(mixed.map((result) => result.status)).toEqual(['duplicate', 'inserted']);
  });

  it('turns synchronous_commit on for its own sessions where the database has it off, and says so', async () => {
    const url = new URL(await isolatedPostgresUrl(databaseUrl!));
    url.searchParams.set('options', `${url.searchParams.get('options')} -c synchronous_commit=off`);
    const admin = await postgresSession(url.toString());
    await admin.query(`CREATE FUNCTION durable_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF current_setting('synchronous_commit') <> 'on' THEN RAISE EXCEPTION 'an insert without synchronous_commit'; END IF; RETURN NEW; END $$`);
    const { logger, lines } = capturingLogger();
    const store = await storeAt(url.toString(), logger);
    await admin.query('CREATE TRIGGER durable_only BEFORE INSERT ON collection_notifications FOR EACH ROW EXECUTE FUNCTION durable_only()');

    expect(await store.insert(notification())).toMatchObject({ status: 'inserted' });
    expect(lines.filter((line) => line.includes('synchronous_commit is off'))).toHaveLength(1);
  });
});
